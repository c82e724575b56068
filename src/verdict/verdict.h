/*
 * verdict.h — internals of the verdict module (none yet beyond the public
 * header; the module's files include this one, as every module's do).
 */
#ifndef STRATA_VERDICT_INTERNAL_H
#define STRATA_VERDICT_INTERNAL_H

#include "strata/verdict.h"

#endif
