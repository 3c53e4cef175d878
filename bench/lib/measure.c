/* Runs one command and appends its cost to a JSON-lines file (scripts/bench.sh builds this with
 * cc).
 *
 *   measure RESULTS GROUP LABEL EXPECT_RC TIMEOUT_S CMD...
 *
 * Wall time is taken around fork/exec/wait; user, sys and peak RSS come from wait4(), so they
 * cover the command and every descendant it waited for (apt's methods, dpkg, maintainer scripts);
 * peak RSS is the largest single process of that tree. C rather than a script: a child forked
 * from an interpreter would report the interpreter's own RSS as its peak. The command's output
 * goes to RESULTS.log. Exits 1 when the command's exit code is not EXPECT_RC, so a broken setup
 * never passes for a fast one. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void json_string(FILE* f, const char* s) {
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static pid_t child;
static void on_alarm(int sig) {
    (void)sig;
    kill(-child, SIGKILL);
}

int main(int argc, char** argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: measure RESULTS GROUP LABEL EXPECT_RC TIMEOUT_S CMD...\n");
        return 2;
    }
    const char *results = argv[1], *group = argv[2], *label = argv[3];
    int expect = atoi(argv[4]);
    unsigned timeout = (unsigned)atoi(argv[5]);
    char logname[4096];
    snprintf(logname, sizeof logname, "%s.log", results);
    int log = open(logname, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) {
        perror(logname);
        return 2;
    }
    dprintf(log, "### %s / %s:", group, label);
    for (int i = 6; i < argc; ++i)
        dprintf(log, " %s", argv[i]);
    dprintf(log, "\n");
    double start = now();
    child = fork();
    if (child < 0) {
        perror("fork");
        return 2;
    }
    if (child == 0) {
        setpgid(0, 0);
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0);
        dup2(log, 1);
        dup2(log, 2);
        execvp(argv[6], argv + 6);
        dprintf(log, "measure: cannot run %s: %s\n", argv[6], strerror(errno));
        _exit(127);
    }
    signal(SIGALRM, on_alarm);
    alarm(timeout);
    int status = 0;
    struct rusage ru;
    while (wait4(child, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("wait4");
            return 2;
        }
    }
    double wall = now() - start;
    alarm(0);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE* out = fopen(results, "a");
    if (!out) {
        perror(results);
        return 2;
    }
    fprintf(out, "{\"group\": ");
    json_string(out, group);
    fprintf(out, ", \"label\": ");
    json_string(out, label);
    fprintf(out,
            ", \"wall_s\": %.6f, \"user_s\": %.6f, \"sys_s\": %.6f, \"rss_kb\": %ld, \"rc\": %d}\n",
            wall, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, rc);
    fclose(out);
    if (rc != expect) {
        fprintf(stderr, "measure: %s / %s exited %d, expected %d (output: %s)\n", group, label, rc,
                expect, logname);
        return 1;
    }
    return 0;
}
