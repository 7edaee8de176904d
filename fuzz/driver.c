/* Plain driver for the fuzz target, for builds without libFuzzer (gcc with
 * AddressSanitizer + LeakSanitizer, or valgrind).
 *
 *   driver [--raw] [--stride N] FILE|DIR...
 *
 * Each file is model output; it is run through every format with several
 * option bytes and chunkings (byte by byte, small and large random cuts).
 * With --raw a file is one complete fuzz input (header bytes included), as
 * libFuzzer writes crash-* files. With --stride N only every Nth run of
 * that matrix is made (counted across files, so with N prime to the
 * matrix's size each file gets other formats, options and chunkings):
 * for valgrind, whose slowdown makes the whole matrix cost minutes per
 * format. Exits 0 when every invariant held;
 * LeakSanitizer then reports any block the parser did not free. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tp_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int raw;
static size_t runs, files, stride = 1, step;

static void one_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 3);
    if (!buf || fread(buf + 3, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: read failed\n", path);
        exit(2);
    }
    fclose(f);
    files++;
    if (raw) {
        LLVMFuzzerTestOneInput(buf + 3, (size_t)n);
        runs++;
    } else {
        static const uint8_t opts[] = {0, 1, 3, 4, 5, 8, 12};
        static const uint8_t chunk[] = {0, 1, 2, 7, 63, 200};
        const char *const *names = tp_format_names();
        for (uint8_t fi = 0; names[fi]; fi++)
            for (size_t o = 0; o < sizeof opts; o++)
                for (size_t c = 0; c < sizeof chunk; c++) {
                    if (step++ % stride)
                        continue;
                    buf[0] = fi;
                    buf[1] = opts[o];
                    buf[2] = chunk[c];
                    LLVMFuzzerTestOneInput(buf, (size_t)n + 3);
                    runs++;
                }
    }
    free(buf);
}

static void walk(const char *path)
{
    struct stat st;
    if (stat(path, &st)) {
        perror(path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        one_file(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        walk(sub);
    }
    if (d)
        closedir(d);
}

int main(int argc, char **argv)
{
    tp_global_init();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--raw") == 0)
            raw = 1;
        else if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
            long k = strtol(argv[++i], NULL, 10);
            if (k < 1) {
                fprintf(stderr, "--stride: a positive number\n");
                return 2;
            }
            stride = (size_t)k;
        } else
            walk(argv[i]);
    }
    printf("driver: %zu files, %zu runs, all invariants held\n", files, runs);
    return 0;
}
