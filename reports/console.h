/* The console view of a report: what `aitk-validate` prints when a run ends. */
#ifndef AITK_REPORTS_CONSOLE_H
#define AITK_REPORTS_CONSOLE_H

#include <stdbool.h>

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

/* One line a check; the reason under failures, warnings and skips (a skip
 * without its reason reads like a pass nobody ran), remedies under failures
 * and warnings; at verbosity > 0 also every reason, expected value and
 * source. Then the buyer's answer and the verdict line. `version` is the
 * running tool's, `color` whether status labels carry ANSI colours. */
aitk_status aitk_render_console(const cJSON *report, const char *version, int verbosity,
                                bool color, aitk_str *out);

#endif
