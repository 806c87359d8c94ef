/* Subcommands of aitk-validate: `aitk-validate COMMAND [ARGS]`.
 * Each takes argv starting at the command name and returns an exit code. */
#ifndef AITK_VALIDATE_COMMANDS_H
#define AITK_VALIDATE_COMMANDS_H

typedef struct aitk_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} aitk_command;

/* NULL when `name` is not a command. */
const aitk_command *aitk_command_find(const char *name);

int aitk_cmd_render(int argc, char **argv);
int aitk_cmd_predict(int argc, char **argv);
int aitk_cmd_gpus(int argc, char **argv);
int aitk_cmd_deps(int argc, char **argv);
int aitk_cmd_compare(int argc, char **argv);
int aitk_cmd_trend(int argc, char **argv);
int aitk_cmd_fleet(int argc, char **argv);

#endif
