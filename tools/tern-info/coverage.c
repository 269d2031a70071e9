/* tern-info --coverage: which of MPI-5.0's C procedures Tern implements,
 * per chapter, from the table tools/bindgen generates (coverage.h). */
#include "coverage.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    int chapter;
    const char *name;
    int implemented, deprecated;
} proc_row_t;

typedef struct {
    int number;
    const char *title;
} chapter_row_t;

static const proc_row_t procs[] = {
#include "coverage_table.h"
};
static const chapter_row_t chapters[] = {
#define TERN_COVERAGE_CHAPTERS(num, title) {num, title},
#include "coverage_table.h"
#undef TERN_COVERAGE_CHAPTERS
};
#define N_PROCS (sizeof procs / sizeof procs[0])
#define N_CHAPTERS (sizeof chapters / sizeof chapters[0])

static void count(int chapter, size_t *done_p, size_t *all_p)
{
    size_t done = 0, all = 0;
    for (size_t i = 0; i < N_PROCS; i++)
        if (chapter < 0 || procs[i].chapter == chapter) {
            all++;
            done += (size_t)procs[i].implemented;
        }
    *done_p = done;
    *all_p = all;
}

/* The names of one chapter with the given state, wrapped at 78 columns. */
static void print_names(int chapter, int implemented)
{
    int col = 0;
    for (size_t i = 0; i < N_PROCS; i++) {
        if (procs[i].chapter != chapter || procs[i].implemented != implemented)
            continue;
        int w = (int)strlen(procs[i].name) + (procs[i].deprecated ? 4 : 0) + 1;
        if (col + w > 78) {
            printf("\n");
            col = 0;
        }
        printf("%s%s%s", col ? " " : "      ", procs[i].name, procs[i].deprecated ? "(d)" : "");
        col += w + (col ? 0 : 5);
    }
    if (col)
        printf("\n");
}

void tern_info_print_coverage_json(const char *indent)
{
    size_t done, all;
    count(-1, &done, &all);
    printf("{\n%s  \"implemented\": %zu,\n%s  \"procedures\": %zu,\n%s  \"chapters\": [\n", indent,
           done, indent, all, indent);
    for (size_t c = 0; c < N_CHAPTERS; c++) {
        size_t d, a;
        count(chapters[c].number, &d, &a);
        printf("%s    {\"chapter\": %d, \"title\": \"%s\", \"implemented\": %zu, "
               "\"procedures\": %zu, \"missing\": [",
               indent, chapters[c].number, chapters[c].title, d, a);
        int first = 1;
        for (size_t i = 0; i < N_PROCS; i++)
            if (procs[i].chapter == chapters[c].number && !procs[i].implemented) {
                printf("%s\"%s\"", first ? "" : ", ", procs[i].name);
                first = 0;
            }
        printf("]}%s\n", c + 1 < N_CHAPTERS ? "," : "");
    }
    printf("%s  ]\n%s}", indent, indent);
}

void tern_info_print_coverage(int json, int list)
{
    size_t done, all;
    if (json) {
        tern_info_print_coverage_json("");
        printf("\n");
        return;
    }
    count(-1, &done, &all);
    printf("MPI-5.0 C procedures implemented: %zu of %zu (the MPI Forum's API data)\n", done,
           all);
    for (size_t c = 0; c < N_CHAPTERS; c++) {
        size_t d, a;
        count(chapters[c].number, &d, &a);
        printf("  %2d. %-52s %3zu of %3zu\n", chapters[c].number, chapters[c].title, d, a);
        if (list && d < a) {
            printf("    missing:\n");
            print_names(chapters[c].number, 0);
        }
    }
    if (!list)
        printf("(tern-info --coverage=missing lists the missing procedures; (d): deprecated)\n");
}
