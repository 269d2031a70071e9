# Test helpers.
#
# tern_add_unit_test(<name> <source>...)
#   A plain program linked with the internal static library; passes when it
#   exits 0.
#
# tern_add_mpi_test(<name> SOURCES <src>... NP <n>... [TIMEOUT <s>] [ENV <VAR=VAL>...])
#   Builds an MPI program against libtern and registers one ctest per rank
#   count, run as `mpiexec -n <n> <prog>`, named <name>_np<n>. The program
#   passes by exiting 0 (it must check its own results and exit non-zero on
#   any mismatch).
function(tern_add_unit_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tern_internal)
  add_test(NAME unit_${name} COMMAND ${name})
  set_tests_properties(unit_${name} PROPERTIES TIMEOUT 60)
endfunction()

function(tern_add_mpi_program name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tern)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/include)
endfunction()

function(tern_add_mpi_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;NP;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  if(NOT TARGET ${name})
    tern_add_mpi_program(${name} ${T_SOURCES})
  endif()
  foreach(np ${T_NP})
    # Recorded so other suites (tests/ofi) can rerun every MPI test that
    # needs no environment of its own.
    if(NOT T_ENV)
      set_property(GLOBAL APPEND PROPERTY TERN_MPI_TESTS "${name}:${np}:${T_TIMEOUT}")
    endif()
    add_test(NAME ${name}_np${np}
             COMMAND $<TARGET_FILE:mpiexec> -n ${np} $<TARGET_FILE:${name}>)
    set_tests_properties(${name}_np${np} PROPERTIES TIMEOUT ${T_TIMEOUT})
    if(T_ENV)
      set_tests_properties(${name}_np${np} PROPERTIES ENVIRONMENT "${T_ENV}")
    endif()
  endforeach()
endfunction()
