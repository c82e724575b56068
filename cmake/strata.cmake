# Helpers shared by every module's CMakeLists.txt.

# strata_module(NAME SOURCES a.c b.c DEPS lower modules...)
# Builds OBJECT library strata_<NAME>; its internal headers live in src/<NAME>/
# and are visible only to modules that list it in DEPS (and to its tests).
function(strata_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;LIBS" ${ARGN})
  add_library(strata_${name} OBJECT ${M_SOURCES})
  # Internal headers are found with -iquote, for #include "x.h" only, so
  # src/sched/sched.h can never shadow the system's <sched.h> (pulled in by
  # <pthread.h>) in a module or test that depends on sched.
  target_include_directories(strata_${name} PUBLIC ${CMAKE_SOURCE_DIR}/include)
  target_compile_options(strata_${name} PUBLIC "-iquote${CMAKE_CURRENT_SOURCE_DIR}")
  target_compile_definitions(strata_${name} PRIVATE STRATA_BUILDING
    STRATA_DATA_DIR_BUILD="${STRATA_DATA_DIR_BUILD}"
    STRATA_DATA_DIR_INSTALL="${STRATA_DATA_DIR_INSTALL}"
    STRATA_DATA_FROM_LIBDIR="${STRATA_DATA_FROM_LIBDIR}"
    STRATA_DATA_FROM_BINDIR="${STRATA_DATA_FROM_BINDIR}"
    STRATA_BUILD_TREE="${CMAKE_BINARY_DIR}"
    STRATA_VERSION="${PROJECT_VERSION}")
  foreach(d ${M_DEPS})
    target_link_libraries(strata_${name} PUBLIC strata_${d})
  endforeach()
  target_link_libraries(strata_${name} PUBLIC PkgConfig::JANSSON ${M_LIBS})
  set_property(GLOBAL APPEND PROPERTY STRATA_MODULES ${name})
endfunction()

# strata_test(NAME SOURCES x_test.c [LABELS quick] [TIMEOUT 60] [MODULE m])
# One cmocka executable per test file, linked to the static (internals) build.
function(strata_test name)
  if(NOT STRATA_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "TIMEOUT;MODULE" "SOURCES;LABELS;LIBS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS quick)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_compile_options(${name} PRIVATE "-iquote${CMAKE_CURRENT_SOURCE_DIR}"
    "-iquote${CMAKE_SOURCE_DIR}/tests")
  if(T_MODULE)
    target_link_libraries(${name} PRIVATE strata_${T_MODULE})
  endif()
  target_compile_definitions(${name} PRIVATE STRATA_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    STRATA_BINARY_DIR="${CMAKE_BINARY_DIR}")
  target_link_libraries(${name} PRIVATE strata_static PkgConfig::CMOCKA ${T_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}"
    ENVIRONMENT "STRATA_DATA_DIR=${CMAKE_SOURCE_DIR}/data")
endfunction()
