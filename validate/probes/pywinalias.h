/* What stands for python.exe on a Windows PATH without being a Python
 * installation: the app execution aliases in %LOCALAPPDATA%\Microsoft\
 * WindowsApps (the Microsoft Store's, and the Python install manager's
 * `python`) and the install manager's launchers in %LOCALAPPDATA%\Python\
 * bin. A shell runs them; the checks cannot read an environment around
 * them, so the runtime they start is found instead where it can be. */
#ifndef AITK_VALIDATE_PROBES_PYWINALIAS_H
#define AITK_VALIDATE_PROBES_PYWINALIAS_H

#include <stdbool.h>

#include "common/str.h"

typedef enum {
    AITK_WINALIAS_NONE,     /* a file to judge as it is (and always elsewhere than Windows) */
    AITK_WINALIAS_APP,      /* an app execution alias in WindowsApps */
    AITK_WINALIAS_LAUNCHER  /* a launcher of the Python install manager */
} aitk_winalias_kind;

/* Which of them `path` (a PATH entry joined with python.exe) is. */
aitk_winalias_kind aitk_winalias_kind_of(const char *path);

/* The runtime the Python install manager's `python` starts by default, the
 * newest pythoncore-X.Y-64 under %LOCALAPPDATA%\Python that holds a
 * python.exe: its folder goes to `prefix`. false when there is none. */
bool aitk_pymanager_default_runtime(aitk_str *prefix);

#endif
