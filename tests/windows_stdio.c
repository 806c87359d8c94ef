/* Linked into every test program of the Windows build (tests/CMakeLists.txt).
 *
 * The Windows C runtime buffers standard output whole when it is a pipe, as
 * it is under CTest, so a test program that crashed lost all it had printed
 * and looked the same as one Wine never started. Unbuffered, a started
 * program's first line (cmocka's header) is out before any test runs, and
 * tests/tools/wine_test_start.sh can tell the two apart. */
#include <stdio.h>

__attribute__((constructor)) static void aitk_test_stdout_unbuffered(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
}
