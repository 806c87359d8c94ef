/* Whether bitsandbytes' chosen CUDA library loads beside torch. The file can
 * be there and still not load: a build of another CUDA major (from
 * BNB_CUDA_VERSION) needs that major's runtime libraries, and torch brings
 * only its own; bitsandbytes then logs "Could not load bitsandbytes native
 * library: libcusparse.so.11: cannot open shared object file"
 * (bitsandbytes-foundation/bitsandbytes issues #1452, #1483) and its 8-bit
 * optimizers fail at the first step.
 *
 * The question is asked of the environment's own interpreter, the way
 * bitsandbytes asks it: `import torch` (which loads torch's CUDA libraries),
 * then ctypes.cdll.LoadLibrary(path) (bitsandbytes/cextension.py,
 * get_native_library). The library is never loaded into this process. */
#ifndef AITK_VALIDATE_PROBES_BNB_LOAD_H
#define AITK_VALIDATE_PROBES_BNB_LOAD_H

#include "common/status.h"
#include "common/str.h"

typedef enum aitk_bnb_load {
    AITK_BNB_LOAD_OK,       /* the library loads after import torch */
    AITK_BNB_LOAD_REFUSED,  /* the loader refused it, or the process died loading it:
                             * `words` says which */
    AITK_BNB_LOAD_NO_TORCH, /* import torch failed first: `words` holds why */
    AITK_BNB_LOAD_UNKNOWN,  /* no answer (not started, hung, crashed): `words` says how */
} aitk_bnb_load;

/* Runs `interpreter` once to load `library` after importing torch. AITK_OK
 * with *result and `words` set (one line, no control characters), or
 * AITK_E_NOMEM. */
aitk_status aitk_bnb_load_beside_torch(const char *interpreter, const char *library,
                                       aitk_bnb_load *result, aitk_str *words);

#endif
