/* The container check. Detection reads only files any user may read: the
 * marker files engines create, /proc/self/cgroup and /proc/self/mountinfo
 * (/proc/1/environ's container= would be plainer, but only root may read
 * it). The signals and the remedies are in container.yaml with their
 * sources; this file reads them and judges. */
#include "validate/probes/container.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/data.h"
#include "common/fileio.h"
#include "common/str.h"
#include "validate/probes/gpu_util.h"

#ifndef _WIN32
#define DATA_FILE "validate/probes/container.yaml"
/* /proc/self/mountinfo of a busy Kubernetes node runs to a few hundred KiB. */
#define PROC_FILE_MAX (4u << 20)

void aitk_container_facts_free(aitk_container_facts *f)
{
    aitk_str_free(&f->engine);
    aitk_str_free(&f->evidence);
}

/* Appends `item`, made printable, to the "; "-separated evidence. */
static aitk_status evidence_add(aitk_str *list, const char *item)
{
    if (list->len && aitk_str_append(list, "; "))
        return AITK_E_NOMEM;
    return aitk_str_append_printable(list, item, false);
}

static aitk_status add_engine(aitk_container_facts *f, const char *engine)
{
    if (!*engine || (f->engine.len && strstr(aitk_str_cstr(&f->engine), engine)))
        return AITK_OK;
    if (f->engine.len && aitk_str_append(&f->engine, ", "))
        return AITK_E_NOMEM;
    return aitk_str_append(&f->engine, engine);
}

static aitk_status markers(const char *root, const aitk_yaml_node *list, aitk_container_facts *f)
{
    aitk_str path = AITK_STR_INIT;
    aitk_status st = AITK_OK;
    for (size_t i = 0; !st && list && list->kind == AITK_YAML_SEQ && i < list->count; i++) {
        const char *rel = aitk_yaml_text(list->items[i], "path");
        path.len = 0;
        st = aitk_str_appendf(&path, "%s/%s", root, rel);
        if (st || !*rel || !aitk_path_exists(aitk_str_cstr(&path)))
            continue;
        f->in_container = true;
        st = add_engine(f, aitk_yaml_text(list->items[i], "engine"));
        if (!st)
            st = evidence_add(&f->evidence, aitk_str_cstr(&path) + strlen(root));
    }
    aitk_str_free(&path);
    return st;
}

/* The first word of the space-separated `words` found in `line`, or NULL. */
static const char *word_in(const char *line, const char *words, char *buf, size_t cap)
{
    for (const char *p = words; *p;) {
        size_t n = strcspn(p, " ");
        if (n && n < cap) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            if (strstr(line, buf))
                return buf;
        }
        p += n;
        p += *p == ' ';
    }
    return NULL;
}

/* Field `k` (1-based, space-separated) of a mountinfo line into buf. */
static const char *field(const char *line, int k, char *buf, size_t cap)
{
    for (int i = 1; i < k && *line; i++) {
        line += strcspn(line, " ");
        line += *line == ' ';
    }
    size_t n = strcspn(line, " \n");
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, line, n);
    buf[n] = '\0';
    return buf;
}

/* One line of /proc/self/cgroup or mountinfo: evidence when it matches. */
static aitk_status scan_line(const char *line, bool mountinfo, const char *words,
                             const char *file, aitk_container_facts *f)
{
    char word[128], point[512];
    const char *hit = NULL;
    if (mountinfo) {
        field(line, 5, point, sizeof point);
        hit = word_in(point, words, word, sizeof word);
        /* A word must be the whole mount point: /etc/hosts is not /etc/hostsx. */
        if (hit && strcmp(point, hit) != 0)
            hit = NULL;
    } else {
        hit = word_in(line, words, word, sizeof word);
    }
    if (!hit)
        return AITK_OK;
    f->in_container = true;
    aitk_str item = AITK_STR_INIT;
    aitk_status st = aitk_str_appendf(&item, "%s: %s %s", file, mountinfo ? "mount point" : "cgroup",
                                      mountinfo ? point : hit);
    if (!st && !strstr(aitk_str_cstr(&f->evidence), aitk_str_cstr(&item)))
        st = evidence_add(&f->evidence, aitk_str_cstr(&item));
    aitk_str_free(&item);
    return st;
}

static aitk_status scan_file(const char *root, const char *rel, bool mountinfo, const char *words,
                             aitk_container_facts *f)
{
    aitk_str path = AITK_STR_INIT;
    char *data = NULL;
    size_t len = 0;
    aitk_status st = aitk_str_appendf(&path, "%s/%s", root, rel);
    if (st)
        return st;
    if (aitk_file_read(aitk_str_cstr(&path), PROC_FILE_MAX, &data, &len, NULL) == AITK_OK) {
        for (char *line = data; !st && line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            st = scan_line(line, mountinfo, words, aitk_str_cstr(&path) + strlen(root), f);
            line = nl ? nl + 1 : NULL;
        }
    }
    free(data);
    aitk_str_free(&path);
    return st;
}

/* /dev/nvidia0, /dev/nvidia1, ...: one per GPU the container was given
 * (nvidiactl, nvidia-uvm and nvidia-caps are not GPUs). */
static int count_gpu_nodes(const char *root)
{
    aitk_str dev = AITK_STR_INIT;
    char **names = NULL;
    size_t count = 0;
    int gpus = 0;
    if (aitk_str_appendf(&dev, "%s/dev", root) == AITK_OK &&
        aitk_dir_names(aitk_str_cstr(&dev), &names, &count, NULL) == AITK_OK) {
        for (size_t i = 0; i < count; i++) {
            const char *n = names[i];
            if (strncmp(n, "nvidia", 6) != 0 || !n[6])
                continue;
            size_t digits = strspn(n + 6, "0123456789");
            gpus += n[6 + digits] == '\0';
        }
        aitk_dir_names_free(names, count);
    }
    aitk_str_free(&dev);
    return gpus;
}

aitk_status aitk_container_detect(const char *root, const aitk_yaml_doc *data,
                                  aitk_container_facts *out)
{
    const aitk_yaml_node *top = data ? data->root : NULL;
    aitk_status st = markers(root, aitk_yaml_get(top, "markers"), out);
    if (!st)
        st = scan_file(root, "proc/self/cgroup", false, aitk_yaml_text(top, "cgroup_words"), out);
    if (!st)
        st = scan_file(root, "proc/self/mountinfo", true, aitk_yaml_text(top, "mount_points"), out);
    out->gpu_nodes = count_gpu_nodes(root);
    if (!st) {
        aitk_str dxg = AITK_STR_INIT;
        st = aitk_str_appendf(&dxg, "%s/%s", root,
                              aitk_yaml_text(aitk_yaml_get(top, "wsl_device"), "path"));
        out->wsl_gpu = !st && aitk_path_exists(aitk_str_cstr(&dxg));
        aitk_str_free(&dxg);
    }
    return st;
}

static aitk_status load_data(aitk_yaml_doc **out, aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    aitk_status st = aitk_data_load_schema(DATA_FILE, 1, &doc, err);
    static const char *const remedies[] = {"no_devices", "no_library", "no_library_wsl"},
                             *const wsl[] = {"wsl_device"};
    if (!st)
        st = aitk_data_need_sourced(doc, "remedy", remedies, 3, "value", err);
    if (!st)
        st = aitk_data_need_sourced(doc, NULL, wsl, 1, "path", err);
    if (st) {
        aitk_yaml_free(doc);
        return st;
    }
    *out = doc;
    return AITK_OK;
}

static aitk_status record(cJSON *env, const aitk_container_facts *f)
{
    cJSON *rec = cJSON_AddObjectToObject(env, "container");
    if (!rec || !cJSON_AddBoolToObject(rec, "in_container", f->in_container) ||
        !cJSON_AddStringToObject(rec, "engine", aitk_str_cstr(&f->engine)) ||
        !cJSON_AddStringToObject(rec, "evidence", aitk_str_cstr(&f->evidence)) ||
        !cJSON_AddNumberToObject(rec, "gpu_device_nodes", f->gpu_nodes) ||
        !cJSON_AddBoolToObject(rec, "wsl_gpu_device", f->wsl_gpu))
        return AITK_E_NOMEM;
    return AITK_OK;
}

/* The judgement: silent (skip) outside a container, pass when a GPU
 * answered, warn with the fix otherwise. A warning, not a failure:
 * gpu.nvml and gpu.cuda_driver already fail in this case and this check
 * says why; and a CPU-only container is a choice some people make on
 * purpose (predict, deps). */
static aitk_status judge(aitk_run_ctx *ctx, const aitk_yaml_doc *data,
                         const aitk_container_facts *f)
{
    const aitk_yaml_node *top = data->root;
    const aitk_yaml_node *remedy = aitk_yaml_get(top, "remedy");
    const cJSON *devices = aitk_gpu_devices(ctx->env);
    int answered = devices ? cJSON_GetArraySize(devices) : 0;
    const char *engine = f->engine.len ? aitk_str_cstr(&f->engine) : "a container";
    aitk_str obs = AITK_STR_INIT, msg = AITK_STR_INIT;
    aitk_check c = {.id = "gpu.container", .category = "gpu",
                    .title = "GPU access from a container", .expected = "", .remedy = "",
                    .source = ""};
    aitk_status st = AITK_OK;
    if (!f->in_container) {
        c.status = AITK_CHECK_SKIP;
        c.observed = "not in a container";
        c.message = "no container engine's marks: nothing to check";
    } else {
        st = aitk_str_appendf(&obs, "in %s (%s); %d /dev/nvidia<N> device node%s%s; %d GPU%s answered",
                              engine, aitk_str_cstr(&f->evidence), f->gpu_nodes,
                              f->gpu_nodes == 1 ? "" : "s", f->wsl_gpu ? ", WSL 2's /dev/dxg" : "",
                              answered, answered == 1 ? "" : "s");
        c.observed = aitk_str_cstr(&obs);
        c.expected = "at least one GPU device node (/dev/nvidia<N>, or /dev/dxg under WSL 2), "
                     "and the driver answering";
        if (answered > 0) {
            c.status = AITK_CHECK_PASS;
            c.message = "the container sees its GPUs";
        } else {
            /* Under WSL 2 the GPU reaches a container as /dev/dxg with
             * Windows' driver libraries from /usr/lib/wsl, never as
             * /dev/nvidia<N>: its own fix when the libraries are missing. */
            const char *key = f->gpu_nodes  ? "no_library"
                              : f->wsl_gpu ? "no_library_wsl"
                                           : "no_devices";
            c.status = AITK_CHECK_WARN;
            if (!st)
                st = aitk_str_appendf(
                    &msg, "%s", f->gpu_nodes
                        ? "the container has GPU device nodes but the NVIDIA driver's libraries "
                          "are not mounted in, so no GPU can be used"
                    : f->wsl_gpu
                        ? "the container has WSL 2's GPU device (/dev/dxg) but no GPU answered: "
                          "Windows' NVIDIA driver libraries (from WSL's /usr/lib/wsl) are not "
                          "mounted in, or not on the loader's path"
                        : "the container was started without GPU access: no /dev/nvidia<N> "
                          "device node, so every GPU check fails and the workloads run on the CPU");
            c.message = aitk_str_cstr(&msg);
            c.remedy = aitk_yaml_text(remedy, key);
            c.source = aitk_yaml_text(aitk_yaml_get(remedy, key), "source");
        }
    }
    if (!st)
        st = aitk_checklist_add(&ctx->checks, &c);
    aitk_str_free(&obs);
    aitk_str_free(&msg);
    return st;
}

#endif /* !_WIN32 */

aitk_status aitk_container_checks_at(aitk_run_ctx *ctx, const char *root)
{
#ifdef _WIN32
    (void)root;
    aitk_check c = {.id = "gpu.container", .category = "gpu", .title = "GPU access from a container",
                    .status = AITK_CHECK_SKIP, .observed = "Windows",
                    .message = "Linux containers only", .expected = "", .remedy = "", .source = ""};
    return aitk_checklist_add(&ctx->checks, &c);
#else
    aitk_yaml_doc *data = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_status st = load_data(&data, &err);
    if (st) {
        /* The file is compiled in: only a broken build or AITK_DATA_DIR gets here. */
        aitk_check c = {.id = "gpu.container", .category = "gpu",
                        .title = "GPU access from a container", .status = AITK_CHECK_FAIL,
                        .observed = aitk_str_cstr(&err), .expected = "",
                        .message = "the container check cannot run without its data",
                        .remedy = "Rebuild aitk-validate, or unset AITK_DATA_DIR if it points at "
                                  "an edited copy.", .source = ""};
        st = st == AITK_E_NOMEM ? st : aitk_checklist_add(&ctx->checks, &c);
        aitk_str_free(&err);
        return st;
    }
    aitk_container_facts f = {0};
    st = aitk_container_detect(root, data, &f);
    if (!st)
        st = record(ctx->env, &f);
    if (!st)
        st = judge(ctx, data, &f);
    aitk_container_facts_free(&f);
    aitk_yaml_free(data);
    aitk_str_free(&err);
    return st;
#endif
}

aitk_status aitk_container_checks(aitk_run_ctx *ctx)
{
    return aitk_container_checks_at(ctx, "");
}
