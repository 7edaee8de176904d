/* Feeds a file to one format in fixed-size chunks (0: one shot), for
 * scripts/scaling.py --instructions (run under valgrind --tool=callgrind:
 * instruction counts, unlike wall time, are not disturbed by caches or
 * other load).   bench FORMAT FILE CHUNK */
#include <stdio.h>
#include <stdlib.h>

#include "tp_parser.h"

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    FILE *f = fopen(argv[2], "rb");
    if (!f)
        return 2;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
        return 2;
    fclose(f);
    size_t chunk = (size_t)atol(argv[3]);
    if (!chunk)
        chunk = (size_t)n + 1;
    tp_global_init();
    tp_parser p;
    if (tp_parser_init(&p, tp_format_find(argv[1]), NULL, 0))
        return 2;
    static const char *const tools[] = {"get_weather", "search", "f"};
    for (int i = 0; i < 3; i++)
        tp_parser_add_tool(&p, (const unsigned char *)tools[i], tools[i][1] ? (tools[i][0] == 'g' ? 11 : 6) : 1);
    size_t events = 0;
    for (long i = 0; i < n; i += (long)chunk) {
        size_t k = (size_t)(n - i) < chunk ? (size_t)(n - i) : chunk;
        tp_parser_feed(&p, b + i, k);
        events += p.nev;
    }
    tp_parser_finish(&p);
    events += p.nev;
    tp_parser_free(&p);
    free(b);
    printf("%zu\n", events);
    return 0;
}
