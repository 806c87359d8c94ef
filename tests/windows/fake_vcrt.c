/* A stand-in for one of the Visual C++ runtime DLLs (vcruntime140.dll,
 * msvcp140.dll, ...): nothing but a version resource (fake_vcrt.rc), which
 * is all windows.vcredist reads. test_windows_checks.c copies it into the
 * scratch Wine prefix's System32 under each runtime DLL's name. */
int aitk_fake_vcrt_marker(void);
int aitk_fake_vcrt_marker(void) { return 0; }
