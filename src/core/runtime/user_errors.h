/* Error classes, codes and strings the program adds (MPI_Add_error_class,
 * _code, _string) and removes (MPI_Remove_error_*). Their values start
 * above MPI_ERR_LASTCODE, as the standard asks, and freed values are used
 * again (a program may add and remove many). The registry is in the
 * lowest core room because both the MPI layer (MPI_Error_class,
 * MPI_Error_string) and the MPI_LASTUSEDCODE attribute read it. The
 * entries outlive MPI_Finalize, like the codes the program keeps. */
#ifndef TERN_CORE_USER_ERRORS_H
#define TERN_CORE_USER_ERRORS_H

#include "base/status.h"
#include <mpi.h>

/* The first value handed out. */
#define TERN_USER_ERROR_BASE (MPI_ERR_LASTCODE + 1)

tern_status_t tern_user_error_add_class(int *errorclass);
/* errorclass: a predefined error class or a live user class. */
tern_status_t tern_user_error_add_code(int errorclass, int *errorcode);
/* errorcode: a live user class or code; the string replaces any other. */
tern_status_t tern_user_error_add_string(int errorcode, const char *string);
/* A class with live codes, a code with a string, a value the user did not
 * add: TERN_ERR_ARG. */
tern_status_t tern_user_error_remove_class(int errorclass);
tern_status_t tern_user_error_remove_code(int errorcode);
tern_status_t tern_user_error_remove_string(int errorcode);

/* The class of a live user class or code; -1 otherwise. */
int tern_user_error_class(int value);
/* Its string ("" when none was added); NULL when it is not live. */
const char *tern_user_error_string(int value);
/* MPI_LASTUSEDCODE: the largest live user value, else MPI_ERR_LASTCODE. */
int tern_user_error_last(void);

#endif
