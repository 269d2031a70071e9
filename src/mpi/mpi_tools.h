/* The MPI tools interface (MPI-5.0 chapter 15): control variables (the
 * knobs of base/knobs.def), performance variables (base/pvars.def and one
 * counter per collective algorithm), categories, enumerations, events and
 * their source. docs/design.md, "Tools interface".
 *
 * Every procedure returns an MPI_T_ERR_* code (or MPI_SUCCESS) itself and
 * never calls an error handler (MPI-5.0 15.3.10); all of them work before
 * MPI_Init and after MPI_Finalize, from any thread: the interface has its
 * own lock (recursive, so an event callback may call MPI_T again), taken
 * after the entry points' lock where both are held (an event is raised
 * under the entry points' lock), never before it. Indices are fixed when
 * the library is built (the rows of the .def tables, then the collective
 * algorithms): nothing is added or deleted while a process runs. */
#ifndef TERN_MPI_TOOLS_H
#define TERN_MPI_TOOLS_H

#include <mpi.h>

/* Shared by the three files of the interface. */
int tern_t_enter(void);
void tern_t_leave(int *held);
/* Holds the interface's lock for the rest of the block; then 0 when the
 * interface is initialized. */
#define TERN_T_GUARD() __attribute__((cleanup(tern_t_leave))) int tern_t_held_ = tern_t_enter()
#define TERN_T_CHECK_INIT()                                                                        \
    TERN_T_GUARD();                                                                                \
    if (!tern_t_initialized())                                                                     \
        return MPI_T_ERR_NOT_INITIALIZED
int tern_t_initialized(void);
/* The string protocol of MPI-5.0 15.3.3: len NULL: nothing; str NULL or
 * *len 0: *len = the length with its terminator; else the text, cut to
 * *len - 1 characters and terminated, and *len = what was written. */
void tern_t_string(const char *text, char *str, int *len);
/* A new empty info object for an output (MPI_INFO_NULL when it cannot). */
int tern_t_new_info(MPI_Info *info);
/* The enumeration of the collective algorithms (the event's, the
 * per-algorithm variables' order). */
MPI_T_enum tern_t_coll_enum(void);
/* The category index of a name in the category table, or -1. */
int tern_t_category_of(const char *name);
/* Frees every session and registration (the last MPI_T_finalize). */
void tern_t_pvar_release_all(void);
void tern_t_event_release_all(void);
int tern_t_pvar_count(void);
int tern_t_event_count(void);
/* The category of pvar or event i (a category index). */
int tern_t_pvar_category(int i);
int tern_t_event_category(int i);
/* The event sink (base/pvars.h) turned on at MPI_T_init_thread. */
void tern_t_event_install(void);

int tern_t_init_thread(int required, int *provided);
int tern_t_finalize(void);

int tern_t_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len);
int tern_t_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len);

int tern_t_cvar_get_num(int *num_cvar);
int tern_t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope);
int tern_t_cvar_get_index(const char *name, int *cvar_index);
int tern_t_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count);
int tern_t_cvar_handle_free(MPI_T_cvar_handle *handle);
int tern_t_cvar_read(MPI_T_cvar_handle handle, void *buf);
int tern_t_cvar_write(MPI_T_cvar_handle handle, const void *buf);

int tern_t_pvar_get_num(int *num_pvar);
int tern_t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *readonly, int *continuous, int *atomic);
int tern_t_pvar_get_index(const char *name, int var_class, int *pvar_index);
int tern_t_pvar_session_create(MPI_T_pvar_session *session);
int tern_t_pvar_session_free(MPI_T_pvar_session *session);
int tern_t_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count);
int tern_t_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle);
int tern_t_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int tern_t_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int tern_t_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int tern_t_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf);
int tern_t_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int tern_t_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);

int tern_t_category_get_num(int *num_cat);
int tern_t_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories);
int tern_t_category_get_num_events(int cat_index, int *num_events);
int tern_t_category_get_index(const char *name, int *cat_index);
int tern_t_category_get_cvars(int cat_index, int len, int *indices);
int tern_t_category_get_pvars(int cat_index, int len, int *indices);
int tern_t_category_get_events(int cat_index, int len, int *indices);
int tern_t_category_get_categories(int cat_index, int len, int *indices);
int tern_t_category_changed(int *update_number);

int tern_t_source_get_num(int *num_sources);
int tern_t_source_get_info(int source_index, char *name, int *name_len, char *desc,
                           int *desc_len, MPI_T_source_order *ordering,
                           MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info);
int tern_t_source_get_timestamp(int source_index, MPI_Count *timestamp);

int tern_t_event_get_num(int *num_events);
int tern_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype *array_of_datatypes, MPI_Aint *array_of_displacements,
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind);
int tern_t_event_get_index(const char *name, int *event_index);
int tern_t_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration);
int tern_t_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info);
int tern_t_event_handle_get_info(MPI_T_event_registration event_registration,
                                 MPI_Info *info_used);
int tern_t_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function *event_cb_function);
int tern_t_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info);
int tern_t_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used);
int tern_t_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function *free_cb_function);
int tern_t_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function *dropped_cb_function);
int tern_t_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer);
int tern_t_event_copy(MPI_T_event_instance event_instance, void *buffer);
int tern_t_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp);
int tern_t_event_get_source(MPI_T_event_instance event_instance, int *source_index);

#endif
