/* A fake libcudnn.so.9 for the standard-level test: the real function name,
 * answering 9.1.0 in cuDNN 9's encoding (major*10000 + minor*100 + patch). */
#include <stddef.h>

size_t cudnnGetVersion(void) { return 90100; }
