/* loader.c: a host that knows nothing of Python (as controller_manager), loading plugin.c's
 * library as class_loader does (RTLD_LOCAL) and calling update from a thread of its own.
 * argv: plugin.so python libpython|- setup.py calls; reads calls rows of 5 dof + 1 doubles on
 * stdin (q, qd, q_ref, qd_ref, qdd_ref, dt) and prints each call's status and effort. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*configure_fn)(const char *, const char *, const char *);
typedef int64_t (*dof_fn)(void);
typedef int32_t (*update_fn)(const double *, const double *, const double *, const double *,
                             const double *, double, double *);
static update_fn update;
static int64_t n, calls;
static double *rows, *out;
static int32_t *status;

static void *cycle(void *unused)
{
    (void)unused;
    for (int64_t k = 0; k < calls; k++) {
        const double *x = rows + k * (5 * n + 1);
        status[k] = update(x, x + n, x + 2 * n, x + 3 * n, x + 4 * n, x[5 * n], out + k * n);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 6)
        return 2;
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    FILE *f = fopen(argv[4], "r");
    static char setup[65536];
    setup[fread(setup, 1, sizeof setup - 1, f)] = 0;
    fclose(f);
    configure_fn configure = (configure_fn)dlsym(plugin, "plugin_configure");
    if (configure(argv[2], argv[3][0] == '-' ? NULL : argv[3], setup) != 0)
        return 1;
    n = ((dof_fn)dlsym(plugin, "plugin_dof"))();
    update = (update_fn)dlsym(plugin, "plugin_update");
    calls = atoll(argv[5]);
    rows = malloc(sizeof(double) * calls * (5 * n + 1));
    out = malloc(sizeof(double) * calls * n);
    status = malloc(sizeof(int32_t) * calls);
    for (int64_t k = 0; k < calls * (5 * n + 1); k++)
        if (scanf("%lf", rows + k) != 1)
            return 3;
    pthread_t thread;
    pthread_create(&thread, NULL, cycle, NULL);
    pthread_join(thread, NULL);
    for (int64_t k = 0; k < calls; k++) {
        printf("%d", status[k]);
        for (int64_t i = 0; i < n; i++)
            printf(" %.17g", out[k * n + i]);
        printf("\n");
    }
    ((void (*)(void))dlsym(plugin, "plugin_cleanup"))();
    return 0;
}
