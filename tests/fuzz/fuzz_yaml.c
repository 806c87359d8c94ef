/* libFuzzer target: the YAML reader every data file and ai-toolkit config
 * goes through (common/yaml.c over libyaml), then a walk of what it built. */
#include <stddef.h>
#include <stdint.h>

#include "common/str.h"
#include "common/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    aitk_yaml_doc *doc = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_yaml_parse("fuzz.yaml", (const char *)data, size, &doc, &err) == AITK_OK) {
        (void)aitk_yaml_get(doc->root, "schema");
        aitk_yaml_free(doc);
    }
    aitk_str_free(&err);
    return 0;
}
