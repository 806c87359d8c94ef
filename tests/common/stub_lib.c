/* A tiny shared library the dynload test opens for real. */
int aitk_stub_answer(void);
int aitk_stub_answer(void) { return 42; }
