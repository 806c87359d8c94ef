/* Redaction: makes a report safe to attach to a public issue.
 *
 * User names, host names, home paths, IP and MAC addresses, GPU serials and
 * UUIDs, and anything that looks like a token or key are replaced over the
 * whole report tree, consistently: the same value always becomes the same
 * placeholder ("[user-1]", "[host-1]", "[secret-2]"), so a reader can still
 * tell that two fields held the same thing. It runs on the tree before any
 * renderer, so JSON, Markdown, HTML and JUnit are all redacted alike. */
#ifndef AITK_REPORTS_REDACT_H
#define AITK_REPORTS_REDACT_H

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

#define AITK_REDACT_KIND_LIST(X) \
    X(AITK_REDACT_USER, "user")     \
    X(AITK_REDACT_HOST, "host")     \
    X(AITK_REDACT_IP, "ip")         \
    X(AITK_REDACT_MAC, "mac")       \
    X(AITK_REDACT_UUID, "uuid")     \
    X(AITK_REDACT_SERIAL, "serial") \
    X(AITK_REDACT_SECRET, "secret")

typedef enum aitk_redact_kind {
#define AITK_X_ENUM(name, text) name,
    AITK_REDACT_KIND_LIST(AITK_X_ENUM)
#undef AITK_X_ENUM
    AITK_REDACT_KIND_COUNT
} aitk_redact_kind;

typedef struct aitk_redactor aitk_redactor;

aitk_status aitk_redactor_new(aitk_redactor **out);
void aitk_redactor_free(aitk_redactor *r);

/* Declares a value known to be private (the caller's $USER, the host name):
 * it is replaced wherever it stands as that name (the rule is written in
 * redact_names.c: jdoe in jdoe2 and /opt/jdoe too; a technical word such as
 * "cuda" only as a home folder or a name field), never in structural
 * fields (see aitk_redactor_apply). A host's short name and a login's
 * local part (jdoe of jdoe@corp.example.com) are learnt with it. Values
 * that identify nobody ("root", "localhost", "Public", under 2 characters)
 * are ignored. */
aitk_status aitk_redactor_add(aitk_redactor *r, aitk_redact_kind kind, const char *value);

/* Learns private values from the tree (host.hostname, fields named like
 * user/serial/uuid/token/secret, user names inside home paths), then rewrites
 * every string and object key in place, except the structural fields that
 * hold the tool's own vocabulary (check ids, categories, statuses, units,
 * sources, backends, the host.os object, the top-level profile);
 * name-shaped keys keep learnt host and user names ("environment.python"
 * for a user called python). */
aitk_status aitk_redactor_apply(aitk_redactor *r, cJSON *tree);

/* Rewrites one text with what the redactor knows plus the patterns. */
aitk_status aitk_redactor_text(aitk_redactor *r, const char *in, aitk_str *out);

/* How many distinct values of `kind` were replaced so far. */
size_t aitk_redactor_count(const aitk_redactor *r, aitk_redact_kind kind);

/* Without --redact too: every string of the tree loses what is a secret by
 * its shape alone: known token formats (hf_, ghp_, AKIA, sk-, ...), JWTs,
 * PEM private keys, Bearer/Basic credentials, the password of a URL
 * (scheme://user:PASSWORD@host), the password option of a known program
 * (mysql -pSECRET, sshpass -p SECRET: redact_commands.c) and secret
 * assignments (token=..., MY_PASSWORD=..., "password": "...", see
 * redact_secrets.c for which names count) become "[secret]". Reports never copy a secret, even one inside a
 * variable they may show (a token in PYTORCH_CUDA_ALLOC_CONF). Names,
 * paths, addresses and long random-looking runs (which hashes resemble)
 * stay: that is --redact's job. */
aitk_status aitk_scrub_secrets(cJSON *tree);

/* The one-call form for a report: new, apply, then marks the report
 * "redacted": true. `user` and `host` may be NULL. */
aitk_status aitk_redact_report(cJSON *report, const char *user, const char *host);

#endif
