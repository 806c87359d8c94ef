/* Finds a data file: AITK_DATA_DIR on disk first when set, else the embedded copy. */
#include "common/data.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

aitk_status aitk_data_load_yaml(const char *name, aitk_yaml_doc **out, aitk_str *err)
{
    const char *dir = getenv("AITK_DATA_DIR");
    if (dir && *dir) {
        aitk_str path = AITK_STR_INIT;
        aitk_status st = aitk_path_join(&path, dir, name);
        if (!st)
            st = aitk_yaml_load_file(aitk_str_cstr(&path), out, err);
        aitk_str_free(&path);
        return st;
    }
    for (size_t i = 0; i < aitk_embedded_file_count; i++)
        if (strcmp(aitk_embedded_files[i].name, name) == 0)
            return aitk_yaml_parse(name, (const char *)aitk_embedded_files[i].data,
                                   aitk_embedded_files[i].len, out, err);
    if (err)
        aitk_str_appendf(err, "%s: no such data file in this build", name);
    return AITK_E_NOTFOUND;
}
