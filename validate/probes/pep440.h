/* Version equality as PEP 440 defines it for a "==" pin: what pip's
 * packaging.specifiers decides when a requirements file pins a version.
 * Both sides are normalized first (PEP 440 "Normalization": case, a leading
 * "v", alpha/beta/c/pre/preview as a/b/rc, rev/r and "-N" as post, the
 * separators . - _ between parts, an implicit 0 after a bare tag), release
 * segments compare as numbers with zeros padded (1.0 == 1.0.0), and a local
 * label ("+cu124") of the installed version is ignored when the pin has
 * none. */
#ifndef AITK_VALIDATE_PROBES_PEP440_H
#define AITK_VALIDATE_PROBES_PEP440_H

#include <stdbool.h>

/* Whether installed `version` satisfies "==pin". A side that is not a
 * PEP 440 version is compared as text, as packaging's legacy versions were. */
bool aitk_pep440_pin_matches(const char *pin, const char *version);

#endif
