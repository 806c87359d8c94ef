/* Removing a test's scratch folder with everything in it: rm -rf without a
 * shell, which the Windows build lacks and which a path with a quote in it
 * would break. A link is removed, never followed (lstat): tests make links
 * that point at real libraries and folders outside their scratch space.
 * Windows has no lstat; the Windows tests make no links, so stat serves. */
#ifndef AITK_TESTS_TEMP_TREE_H
#define AITK_TESTS_TEMP_TREE_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 when `path` is gone (or never was); -1 when something in it stayed. */
static inline int aitk_test_remove_tree(const char *path)
{
    struct stat sb;
#ifdef _WIN32
    if (stat(path, &sb) != 0)
        return 0;
#else
    if (lstat(path, &sb) != 0)
        return 0;
#endif
    if (!S_ISDIR(sb.st_mode))
        return remove(path) == 0 ? 0 : -1;
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char child[4096];
        if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child) {
            rc = -1;
            continue;
        }
        rc |= aitk_test_remove_tree(child);
    }
    closedir(d);
    return (rmdir(path) == 0 && rc == 0) ? 0 : -1;
}

#endif
