/* The compatibility matrix (validate/compat.yaml): named profiles, each one
 * source of truth (ai-toolkit today, the original guide, ...), each rule with
 * its source. Providers read their section of the selected profile. */
#ifndef AITK_VALIDATE_COMPAT_H
#define AITK_VALIDATE_COMPAT_H

#include "common/status.h"
#include "common/str.h"
#include "common/yaml.h"
#include "reports/check.h"

struct aitk_compat {
    aitk_yaml_doc *doc;
    const aitk_yaml_node *profile;  /* the selected profile's map */
    const char *profile_name;
    const aitk_yaml_node *tables;   /* profile-independent facts; may be NULL */
};
typedef struct aitk_compat aitk_compat;

/* Loads the matrix and selects `profile` (NULL: the file's default_profile).
 * An unknown name is AITK_E_INVAL with the list of known profiles in err. */
aitk_status aitk_compat_load(const char *profile, aitk_compat **out, aitk_str *err);
void aitk_compat_free(aitk_compat *c);

/* A rule of the selected profile: section.key -> {value, source}.
 * Returns NULL when the profile states no such rule. */
const aitk_yaml_node *aitk_compat_rule(const aitk_compat *c, const char *section,
                                       const char *key);
/* The rule's source text ("" when absent). */
const char *aitk_compat_rule_source(const aitk_yaml_node *rule);

/* A profile-independent table (driver minimums, wheel arch lists, ...) and
 * one of its rows; NULL when absent. Rows have the rule shape. */
const aitk_yaml_node *aitk_compat_table(const aitk_compat *c, const char *table);
const aitk_yaml_node *aitk_compat_table_row(const aitk_compat *c, const char *table,
                                            const char *key);
/* The text of a scalar value; NULL when the value is absent or not a scalar. */
const char *aitk_compat_rule_text(const aitk_yaml_node *rule);
/* What breaking the rule means under its profile: the rule's severity, FAIL by default. */
aitk_check_status aitk_compat_rule_severity(const aitk_yaml_node *rule);

#endif
