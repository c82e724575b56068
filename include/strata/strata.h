/*
 * strata/strata.h — the umbrella header: include this to get the whole
 * public API of libstrata.
 */
#ifndef STRATA_STRATA_H
#define STRATA_STRATA_H

#include "strata/common.h"
#include "strata/link.h"
#include "strata/coherence.h"
#include "strata/topo.h"
#include "strata/sched.h"
#include "strata/sim.h"
#include "strata/comm.h"
#include "strata/plan.h"
#include "strata/probe.h"
#include "strata/verdict.h"
#include "strata/report.h"

#endif
