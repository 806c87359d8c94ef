/* .env files as python-dotenv reads them: ai-toolkit's run.py calls
 * load_dotenv(), so a token written in one reaches the job (hub_token.h). */
#ifndef AITK_VALIDATE_PROBES_DOTENV_H
#define AITK_VALIDATE_PROBES_DOTENV_H

#include <stdbool.h>

/* Whether the text of a .env file sets `key` to a value that is not blank,
 * read as python-dotenv 1.2.4's load_dotenv reads it: "KEY=value", an
 * optional "export ", spaces around '=', single or double quotes, a '#'
 * comment after an unquoted value, the last line for a key winning, a
 * byte-order mark ignored, ${NAME} and ${NAME:-default} expanded from the
 * environment, else from the lines above. */
bool aitk_dotenv_sets(const char *text, const char *key);

#endif
