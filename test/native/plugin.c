/* plugin.c: what a ros2_control controller's shared library does with a robodyn_ros law
 * (doc/native.md), without ROS: on_configure owns an embedded interpreter, builds the law and
 * lets go of the GIL; update calls the law's step, with no Python anywhere in the call.
 * Loaded by loader.c as class_loader loads a controller: dlopen(RTLD_LOCAL). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "robodyn_law.h"

static robodyn_law *law;
static PyThreadState *saved;

/* python: the venv's interpreter (its prefix and site-packages); libpython: the shared library
 * to make global first (0: don't), as numpy's extension modules need; setup: Python code that
 * leaves the struct's address in `address`. 0 on success. */
int plugin_configure(const char *python, const char *libpython, const char *setup)
{
    if (libpython && !dlopen(libpython, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "dlopen %s: %s\n", libpython, dlerror());
        return 1;
    }
    /* the ROS wheels' start-up hook (a .pth) would exec sys.executable: not in this process */
    setenv("_ROS_WHEELS_BOOTSTRAP_COMPLETE", "1", 1);
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;   /* SIGINT stays the host's */
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, python);
    if (!PyStatus_Exception(status))
        status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        fprintf(stderr, "Python did not start: %s\n", status.err_msg ? status.err_msg : "?");
        return 1;
    }
    PyObject *globals = PyModule_GetDict(PyImport_AddModule("__main__"));
    PyObject *done = PyRun_String(setup, Py_file_input, globals, globals);
    PyObject *address = done ? PyDict_GetItemString(globals, "address") : NULL;
    if (address == NULL) {
        PyErr_Print();
        return 1;
    }
    law = (robodyn_law *)PyLong_AsVoidPtr(address);
    Py_DECREF(done);
    saved = PyEval_SaveThread();   /* the GIL let go of: update never takes it */
    return law->abi == ROBODYN_LAW_ABI && law->kind == ROBODYN_KIND_LAW ? 0 : 1;
}

int64_t plugin_dof(void) { return law->dof; }

int32_t plugin_update(const double *q, const double *qd, const double *q_ref,
                      const double *qd_ref, const double *qdd_ref, double dt, double *effort)
{
    return robodyn_law_step(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort);
}

void plugin_cleanup(void)
{
    PyEval_RestoreThread(saved);
    Py_FinalizeEx();
}
