/* An ai-toolkit checkout's requirements, as pip reads its requirements
 * files, set against the distributions installed in an environment.
 *
 * python.requirements judges seven packages ai-toolkit cannot start
 * without; the checkout's requirements.txt names about forty (ai-toolkit
 * @27a03a9: requirements.txt includes requirements_base.txt with -r), and
 * a `pip install -r requirements.txt` that stopped half-way (a package that
 * failed to build) leaves some out. This reads what pip would read, for the
 * check to name what is missing and what is not at the version pinned.
 *
 * The file format is pip's ("Requirements File Format" in pip's user
 * guide): one requirement a line, comments after '#', "-r FILE" and
 * "--requirement FILE" relative to the including file, other options
 * ignored; a requirement is PEP 508 (name, extras, version specifiers,
 * "; marker"), "name @ URL", a URL named by "#egg=", or a wheel file. A
 * VCS URL without "#egg=" (ai-toolkit's diffusers line) has no name until
 * pip builds it: it is named by its repository, and the installed copy
 * must come from that repository at that commit, as pip recorded it in the
 * distribution's direct_url.json. An archive without "#egg=" has no name
 * until pip builds it, and a requirement with an environment marker is for
 * a platform not known here: neither is judged. */
#ifndef AITK_VALIDATE_PROBES_PYREQS_H
#define AITK_VALIDATE_PROBES_PYREQS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "common/str.h"

typedef struct cJSON cJSON;

typedef struct aitk_pyreq {
    char *name;  /* normalized as PEP 503 says: lower case, runs of -_. one '-' */
    char *pin;   /* the version of a lone "==" specifier, else NULL */
    char *where; /* "requirements_base.txt:5" */
    /* A package asked for from a repository (vcs_url.h): the repository's
     * URL without credentials and the revision after its '@' (NULL when
     * none); else both NULL. */
    char *repo, *revision;
    char *subdirectory; /* "#subdirectory=": the project's folder in the repository, or NULL */
    bool named_by_url;  /* no #egg= and no "name @": named by the repository */
} aitk_pyreq;

typedef struct aitk_pyreqs {
    aitk_pyreq *items;
    size_t count;
} aitk_pyreqs;

/* Reads `path` and the files it includes. AITK_E_IO when `path` cannot be
 * read (err: "path: reason"); an include that cannot be read, or an include
 * loop, is AITK_E_INVAL with "file:line: ..." in err. */
aitk_status aitk_pyreqs_read(const char *path, aitk_pyreqs *out, aitk_str *err);
void aitk_pyreqs_free(aitk_pyreqs *r);

/* PEP 503's normalized form of a distribution name, into `out`. */
aitk_status aitk_pyreq_normalize(const char *name, size_t len, aitk_str *out);

/* The ai-toolkit checkout whose requirements.txt is read: `aitk_dir`
 * (--aitk-dir) when given, else the working folder when it is one (run.py
 * and toolkit/ beside requirements.txt), else NULL. */
const char *aitk_pyreqs_checkout(const char *aitk_dir);

/* A checkout's requirements set against an environment. */
typedef struct aitk_pyreqs_verdict {
    aitk_str file;     /* the requirements file read */
    aitk_str problem;  /* why it could not be read ("" when it was) */
    aitk_str missing;  /* "lycoris-lora, kornia": listed, not installed */
    aitk_str unpinned; /* "transformers 4.57.1 (==5.5.3 at requirements_base.txt:5)" */
    /* "diffusers 0.42.1 from a package index (no direct_url.json), not
     * git+https://github.com/huggingface/diffusers.git@c943837899b1
     * (requirements_base.txt:3)": asked for from a repository's commit,
     * installed from elsewhere ("; " between them) */
    aitk_str elsewhere;
    aitk_str elsewhere_names; /* "diffusers": their names, one space between */
    /* "git": the programs pip runs to install the requirements from
     * repositories that are missing or came from elsewhere (pip's VCS
     * backends are named by the scheme: git, hg, svn, bzr), one space
     * between; those judged elsewhere (`skip`) included */
    aitk_str vcs_programs;
    size_t listed;     /* distinct requirements read */
} aitk_pyreqs_verdict;

/* Reads CHECKOUT/requirements.txt and sets it against the distributions of
 * the folders in `site_packages` (the environment record's list of
 * {path}); a missing one named in `skip` (NULL-terminated, normalized) is
 * left out, being judged elsewhere (its pin is still judged). */
aitk_status aitk_pyreqs_judge(const char *checkout, const cJSON *site_packages,
                              const char *const *skip, aitk_pyreqs_verdict *v);
void aitk_pyreqs_verdict_free(aitk_pyreqs_verdict *v);

#endif
