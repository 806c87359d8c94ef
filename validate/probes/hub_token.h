/* Where an ai-toolkit job would find a Hugging Face token, the key to a
 * gated model's download (hub.yaml). Only where one is, never the token:
 * it must not reach a report.
 *
 * The places, as the job's own code reads them: the environment (HF_TOKEN,
 * or the older HUGGING_FACE_HUB_TOKEN: huggingface_hub's get_token), the
 * token file `hf auth login` writes (huggingface_hub constants: HF_TOKEN_PATH,
 * else HF_HOME/token, HF_HOME defaulting to $XDG_CACHE_HOME/huggingface or
 * ~/.cache/huggingface), a .env file in the checkout or a folder above it
 * (run.py calls python-dotenv's load_dotenv(), whose find_dotenv walks up
 * from the calling script's folder), and the UI's settings (ui/prisma/
 * schema.prisma: the Settings table of aitk_db.db in the checkout, whose
 * HF_TOKEN row ui/cron/actions/startJob.ts passes to every job it starts). */
#ifndef AITK_VALIDATE_PROBES_HUB_TOKEN_H
#define AITK_VALIDATE_PROBES_HUB_TOKEN_H

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_hub_token {
    aitk_str found;  /* "HF_TOKEN in the environment", "the token file /x/token", ...; "" */
    aitk_str looked; /* every place looked in, "; " between */
    aitk_str unread; /* a place that exists but could not be read, and why; "" */
} aitk_hub_token;

/* Looks in every place above, stopping at the first that holds a token.
 * `checkout`: the ai-toolkit folder (NULL: its .env and UI database are not
 * looked for); `python`: the interpreter that reads the UI's SQLite
 * database (its own sqlite3 module; NULL: the database is unread). */
aitk_status aitk_hub_token_find(const char *checkout, const char *python, aitk_hub_token *out);
void aitk_hub_token_free(aitk_hub_token *t);

/* The token file huggingface_hub reads, into `path`; AITK_E_NOTFOUND when
 * there is no home folder to put it in. */
aitk_status aitk_hub_token_file(aitk_str *path);

#endif
