/* Version-control URLs as pip writes and records them.
 *
 * A requirements file can ask for a package from a commit of its
 * repository: ai-toolkit's requirements_base.txt has
 * "git+https://github.com/huggingface/diffusers.git@c943837..." (pip's
 * user guide, "VCS Support": vcs+protocol://host/path[@revision][#egg=...]).
 * pip records where each such install came from in the distribution's
 * direct_url.json (PEP 610, now the "Recording the Direct URL Origin of
 * installed distributions" specification): the URL without the "git+" and
 * without the revision, and the commit it resolved to. Comparing the two
 * tells whether the installed copy is the one the file asks for. */
#ifndef AITK_VALIDATE_PROBES_VCS_URL_H
#define AITK_VALIDATE_PROBES_VCS_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/str.h"

typedef struct aitk_vcs_url {
    aitk_str repo;     /* "git+https://github.com/huggingface/diffusers.git": no credentials */
    aitk_str revision; /* "c943837..." after the path's last '@', or "" */
    aitk_str name;     /* "diffusers": the repository's name, which pip's build usually gives */
    aitk_str subdirectory; /* "#subdirectory=pkgs/a": the project's folder in it, or "" */
} aitk_vcs_url;

/* Reads a requirement URL (its first `len` bytes) when it is a VCS one
 * (git+, hg+, svn+ or bzr+, a scheme, "://"): false, with nothing filled,
 * for any other. The fragment (#egg=, #subdirectory=) is left out of the
 * repository's URL; a query stays in it, as pip records it. */
bool aitk_vcs_url_parse(const char *url, size_t len, aitk_vcs_url *out);
void aitk_vcs_url_free(aitk_vcs_url *u);

/* The URL with the user name and password removed ("https://tok@host/x"
 * -> "https://host/x"): a token in a requirements file must not reach a
 * report. `len` bytes of `url` are read. */
void aitk_url_without_credentials(const char *url, size_t len, aitk_str *out);

/* Whether two URLs name the same repository: "git+" prefixes, credentials,
 * the case of scheme and host, a trailing '/' and ".git" do not count. */
bool aitk_vcs_same_repo(const char *a, const char *b);

/* Whether `commit` (40 hex digits, as direct_url.json records it) is the
 * one `revision` names: true when the revision is 7 to 40 hex digits that
 * begin it. False for a branch or tag name, which only the requested
 * revision can match. */
bool aitk_vcs_commit_matches(const char *revision, const char *commit);

/* Whether `revision` is written as a commit (7 to 40 hex digits). */
bool aitk_vcs_revision_is_commit(const char *revision);

#endif
