/* The fleet report of an MPI launch (mpi_fleet_report.h): the one call
 * site of the fleet API under --mpi. */
#include "validate/mpi_fleet_report.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#include "common/fileio.h"
#include "common/log.h"
#include "reports/report.h"
#include "validate/cli.h"

enum { FLEET_JSON, FLEET_MARKDOWN, FLEET_HTML, FLEET_FILES };

static aitk_status render(const cJSON *fleet, int kind, aitk_str *out)
{
    switch (kind) {
    case FLEET_JSON: return aitk_report_to_json(fleet, out);
    case FLEET_MARKDOWN: return aitk_fleet_render_markdown(fleet, out);
    default: return aitk_fleet_render_html(fleet, out);
    }
}

/* One file of the fleet report, written atomically; false when it was
 * not (logged). */
static bool write_one(const char *dir, const cJSON *fleet, int kind, bool quiet)
{
    static const char *const names[FLEET_FILES] = {"fleet.json", "fleet.md", "fleet.html"};
    aitk_str path = AITK_STR_INIT, text = AITK_STR_INIT, err = AITK_STR_INIT;
    aitk_status st = aitk_path_join(&path, dir, names[kind]);
    if (!st && (st = render(fleet, kind, &text)))
        aitk_str_appendf(&err, "%s: could not render it (%s)", aitk_str_cstr(&path),
                         aitk_strerror(st));
    if (!st)
        st = aitk_file_write_atomic(aitk_str_cstr(&path), text.ptr, text.len, &err);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "fleet report: %s",
                 err.len ? aitk_str_cstr(&err) : "out of memory");
    } else if (!quiet) {
        aitk_str shown = AITK_STR_INIT;
        aitk_str_append_printable(&shown, aitk_str_cstr(&path), false);
        printf("Fleet report: %s\n", aitk_str_cstr(&shown));
        aitk_str_free(&shown);
    }
    aitk_str_free(&path);
    aitk_str_free(&text);
    aitk_str_free(&err);
    return !st;
}

int aitk_mpi_fleet_report(const char *dir, const aitk_fleet_node *nodes, size_t n, bool quiet)
{
    cJSON *fleet = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = aitk_fleet_merge(nodes, n, &fleet, &err);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "fleet report: %s",
                 err.len ? aitk_str_cstr(&err) : aitk_strerror(st));
        aitk_str_free(&err);
        return AITK_EXIT_INTERNAL;
    }
    aitk_str_free(&err);
    int rc = aitk_fleet_exit_code(fleet);
    for (int k = 0; k < FLEET_FILES; k++)
        if (!write_one(dir, fleet, k, quiet))
            rc = AITK_EXIT_INTERNAL;
    cJSON_Delete(fleet);
    return rc;
}
