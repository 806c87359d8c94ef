/* Internal to redaction (redact.c): text matchers for private values.
 * Not for other modules. Each aitk_redact_match_* returns the length of the
 * match at p, or 0. */
#ifndef AITK_REPORTS_REDACT_PATTERNS_H
#define AITK_REPORTS_REDACT_PATTERNS_H

#include <stdbool.h>
#include <stddef.h>

/* Flags from the field a text sits in (see key_flags in redact.c).
 * NO_NAMES: learnt host and user names are not replaced (object keys).
 * NAME_FIELD: the field holds a host or user name (hostname, user): one
 * that is exactly a learnt name loses it even when it is a technical word. */
enum {
    AITK_REDACT_TEXT_NO_IP = 1,
    AITK_REDACT_TEXT_NO_HEX = 2,
    AITK_REDACT_TEXT_NO_NAMES = 4,
    AITK_REDACT_TEXT_NAME_FIELD = 8
};

bool aitk_redact_is_word(char c);
/* A character that continues a host or user name token: a word character
 * or '-' (see match_learnt in redact.c for the whole rule). */
bool aitk_redact_is_name_char(char c);
/* Case-insensitive: needle (lower case) in hay[0..n). */
bool aitk_redact_ci_contains(const char *hay, size_t n, const char *needle);
bool aitk_redact_ci_equal(const char *a, const char *b);

/* Secret shapes (redact_secrets.c). A name (JSON key, VARIABLE of
 * VARIABLE=value) that holds a secret when its value is 8+ characters. */
bool aitk_redact_secret_name(const char *name, size_t n);
/* A name (JSON key, header, --flag) whose value is a secret whatever its
 * shape or length: DB_PASSWORD, api_key, HF_TOKEN, auth, Cookie. */
bool aitk_redact_secret_field(const char *name, size_t n);
/* A JSON number under `name` that is a secret: any under a password's name,
 * an integer of 8+ digits under another secret field. */
bool aitk_redact_secret_number(const char *name, size_t n, double value);
/* v[0..n) looks made by a machine, as tokens and keys are: letters and
 * digits together, no dots or spaces, not a path. */
bool aitk_redact_machine_made(const char *v, size_t n);

size_t aitk_redact_match_uuid(const char *p);
size_t aitk_redact_match_mac(const char *p);
size_t aitk_redact_match_ipv4(const char *p);
size_t aitk_redact_match_ipv6(const char *p);
size_t aitk_redact_match_token(const char *p);
size_t aitk_redact_match_random(const char *p, unsigned flags);
/* prev: the character before p ('\0' at the start). *name_len gets the
 * part to keep (name, separator, opening quote). */
size_t aitk_redact_match_assignment(const char *p, char prev, size_t *name_len);
size_t aitk_redact_match_bearer(const char *p, size_t *keep);
size_t aitk_redact_match_jwt(const char *p);
size_t aitk_redact_match_pem(const char *p, size_t *keep);
/* A URL's userinfo, offsets from where it was found: the user, the
 * password after a ':' (colon; it may be empty), the end (past the '@').
 * user_secret: the user name is the credential itself (https://TOKEN@host,
 * https://TOKEN:@host). */
typedef struct aitk_url_credentials {
    size_t user_at, user_len, password_at, password_len, end;
    bool colon, user_secret;
} aitk_url_credentials;
/* (redact_userinfo.c) in[i] starts userinfo with a secret in it: "://" after a scheme
 * (scheme://user:password@host, scheme://TOKEN@host), or a proxy written
 * without one at the start of a word (user:password@proxy:8080). */
bool aitk_redact_match_userinfo(const char *in, size_t i, aitk_url_credentials *c);
/* The value of a URL query parameter named like a credential (sig=,
 * X-Amz-Signature=, token=) at p, after its '?' or '&' (prev); *keep
 * counts the name and '='. */
size_t aitk_redact_match_query_secret(const char *p, char prev, size_t *keep);
/* A password given to a known program on its command line, at in[i] (the
 * option's '-'): mysql -pSECRET, sshpass -p SECRET, docker login -p
 * SECRET, curl -u USER:SECRET (redact_commands.c has the table and each
 * program's rule). *keep counts what stays before it (the option, an
 * opening quote, "USER:"). 0: none. */
size_t aitk_redact_match_tool_password(const char *in, size_t i, size_t *keep);
/* A secret at in[i], for both the --redact rewrite and the scrub every
 * report gets: a known token shape, a JWT; with `random` (in[i] starts a
 * word of base64) a long random string (aitk_redact_match_random, under
 * `flags`); a credential parameter of a URL query, a PEM private key, a
 * header (Authorization, Cookie, x-api-key), a --token flag, a known
 * program's password option, a .netrc password, a Bearer credential, or
 * NAME=value with a secret-sounding name; *keep counts what stays before
 * it (name, separator, scheme). 0: none. */
size_t aitk_redact_match_secret(const char *in, size_t i, bool random, unsigned flags,
                                size_t *keep);
/* True when in[i] starts a dotted number that is a version, not an address. */
bool aitk_redact_version_context(const char *in, size_t i);
/* Learnt names (redact_names.c; the rule is written there). */
bool aitk_redact_technical_word(const char *v, size_t n);
/* name[0..n) at in[i] is not continued by its neighbours (jdoe in jdoe2:
 * yes; ann in annotation: no); a name under 4 characters stands alone (ml
 * in libnvidia-ml.so.1: no; in max@ml: yes). */
bool aitk_redact_name_bounded(const char *in, size_t i, const char *name, size_t n);
/* c[0..n) names a folder that holds home folders (home, homes, home2, Users). */
bool aitk_redact_home_parent(const char *c, size_t n);
/* in[i] starts the component right after such a folder: a home folder. */
bool aitk_redact_home_component(const char *in, size_t i);

#endif
