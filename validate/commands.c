/* The subcommand table. A command that a later change adds gets its own
 * cmd_<name>.c and one line here. */
#include "validate/commands.h"

#include <stdio.h>
#include <string.h>

#include "validate/cli.h"

/* Commands whose capability is not in this build yet say so and exit 2,
 * rather than pretending: a script that calls them learns at once. */
static int not_in_this_build(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr,
            "aitk-validate: error: the '%s' command is not in this build yet "
            "(see README.md, \"Status\")\n",
            argv[0]);
    return AITK_EXIT_USAGE;
}

static const aitk_command commands[] = {
    {"render", "re-render a saved report.json as Markdown", aitk_cmd_render},
    {"deps", "library dependency doctor (ELF and PE trees)", not_in_this_build},
    {"predict", "predict time and memory on GPUs you do not have", not_in_this_build},
    {"compare", "compare two reports; fail on regressions", not_in_this_build},
    {"gpus", "list the GPU database", not_in_this_build},
};

const aitk_command *aitk_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}
