# apps.mk - builds the test programs in apps/ (included by the top-level
# Makefile). Each apps/<name>.cu becomes three binaries:
#   $(BUILD)/apps/static/<name>   static cudart (nvcc default)
#   $(BUILD)/apps/shared/<name>   -cudart shared
#   $(BUILD)/apps/ptds/<name>     --default-stream per-thread
# `make apps` builds them all.

BUILD     ?= build
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc

APPS_CU       := $(wildcard apps/*.cu)
APPS_NAMES    := $(notdir $(basename $(APPS_CU)))
APPS_HEADERS  := $(wildcard apps/*.h apps/*.cuh)
APPS_VARIANTS := static shared ptds
APPS_BINS     := $(foreach v,$(APPS_VARIANTS),$(addprefix $(BUILD)/apps/$(v)/,$(APPS_NAMES)))

APPS_NVCCFLAGS ?= -O2 -arch=sm_90 -std=c++17 -Xcompiler -Wall,-Wextra
APPS_LDFLAGS   ?= -Xlinker -rpath=$(CUDA_HOME)/lib64
# Per-program extra libraries: APPS_LIBS_<name>.
APPS_LIBS_mlp_cublas := -lcublas
APPS_LIBS_cg_solver  := -lcublas -lcusparse

APPS_FLAGS_static :=
APPS_FLAGS_shared := -cudart shared
APPS_FLAGS_ptds   := --default-stream per-thread

.PHONY: apps
apps: $(APPS_BINS)

define APPS_VARIANT_RULE
$(BUILD)/apps/$(1)/%: apps/%.cu $(APPS_HEADERS)
	@mkdir -p $$(@D)
	$(NVCC) $(APPS_NVCCFLAGS) $(APPS_FLAGS_$(1)) -o $$@ $$< $(APPS_LDFLAGS) $$(APPS_LIBS_$$*)
endef
$(foreach v,$(APPS_VARIANTS),$(eval $(call APPS_VARIANT_RULE,$(v))))
