/* The subcommand table. A command that a later change adds gets its own
 * cmd_<name>.c and one line here. */
#include "validate/commands.h"

#include <string.h>

static const aitk_command commands[] = {
    {"render", "re-render a saved report.json (Markdown, HTML, JUnit)", aitk_cmd_render},
    {"deps", "library dependency doctor (ELF and PE trees)", aitk_cmd_deps},
    {"predict", "predict time and memory on GPUs you do not have", aitk_cmd_predict},
    {"compare", "compare two reports; fail on regressions", aitk_cmd_compare},
    {"fleet", "merge per-node reports; show outliers and differences", aitk_cmd_fleet},
    {"trend", "how metrics moved over many reports (nightly CI)", aitk_cmd_trend},
    {"gpus", "list the GPU database", aitk_cmd_gpus},
};

const aitk_command *aitk_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}
