/* Report text written as Markdown that GitHub shows as the same characters.
 *
 * Text from a report (a Windows path, a library name, a loader's message, a
 * remedy) is not Markdown: a backslash before an underscore, a tilde in an
 * 8.3 short name or a pair of asterisks would be read as markup and change
 * what a reader sees. These functions write it so that cmark-gfm, GitHub's
 * renderer, gives back the text itself, and so that nothing in it becomes a
 * link, an image, raw HTML or a new table cell. The one markup let through is
 * a code span: remedies put commands between backticks on purpose, and a
 * code span cannot hold anything but literal text. A word that GitHub would
 * link or act on (a URL, an e-mail address, @user, #123, owner/repo#123) is
 * written as a code span too, so that pasting a report into an issue pings
 * and cross-references no one. */
#ifndef AITK_REPORTS_MARKDOWN_TEXT_H
#define AITK_REPORTS_MARKDOWN_TEXT_H

#include <stdbool.h>

#include "common/str.h"

/* Text in a paragraph, heading or list item: newlines folded to spaces,
 * control characters shown as escapes (\x1b), and the characters Markdown
 * reads as markup (\ * _ ~ [ & < | and a backtick that opens no code span)
 * escaped. A code span keeps its backticks and its text as is. */
void aitk_markdown_inline(aitk_str *out, const char *s);

/* The same for one table cell, where a pipe ends the cell even inside a
 * code span, so it is escaped there too (GFM spec, 4.10 Tables). */
void aitk_markdown_cell(aitk_str *out, const char *s);

/* `s` as one code span, backticks included, whatever it holds: a fence
 * longer than any run of backticks inside it. Nothing for an empty `s`.
 * `cell`: the span stands in a table cell (see aitk_markdown_cell). */
void aitk_markdown_code(aitk_str *out, const char *s, bool cell);

#endif
