/* A model of the disk for the power-loss test (tests/test_power_cut.py), loaded with
 * LD_PRELOAD into the box's process. A power cut keeps only what was written out by an
 * fsync: each time a file under $SYNC_SNAPSHOT_DIR is fsync'd or fdatasync'd, a copy of it
 * as it stands then is kept beside it as FILE.synced. After the process ends, the .synced
 * copies are the disk a power cut at that moment would have left (a write not yet synced
 * is lost; SQLite's WAL is built to recover from exactly that). Nothing else changes: the
 * real call is made first and its result returned. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void keep_synced_copy(int fd) {
    const char *dir = getenv("SYNC_SNAPSHOT_DIR");
    if (dir == NULL || *dir == '\0')
        return;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return;
    path[n] = '\0';
    size_t len = strlen(dir);
    struct stat st;
    if (strncmp(path, dir, len) != 0 || path[len] != '/' || fstat(fd, &st) != 0 ||
        !S_ISREG(st.st_mode))
        return;
    char tmp[PATH_MAX + 16], out[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.synced-new", path);
    snprintf(out, sizeof out, "%s.synced", path);
    int copy = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (copy < 0)
        abort(); /* a model that silently kept nothing would pass any test */
    char buf[1 << 16];
    off_t at = 0;
    ssize_t got;
    while ((got = pread(fd, buf, sizeof buf, at)) > 0) {
        for (ssize_t done = 0; done < got;) {
            ssize_t w = write(copy, buf + done, (size_t)(got - done));
            if (w <= 0)
                abort();
            done += w;
        }
        at += got;
    }
    if (got < 0 || close(copy) != 0 || rename(tmp, out) != 0)
        abort();
}

/* The real call, then the copy if it succeeded. */
static int synced(const char *name, int fd) {
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, name);
    int rc = real(fd);
    if (rc == 0)
        keep_synced_copy(fd);
    return rc;
}

int fsync(int fd) { return synced("fsync", fd); }

int fdatasync(int fd) { return synced("fdatasync", fd); }
