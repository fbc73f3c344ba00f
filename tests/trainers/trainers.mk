# The training programs (build/trainers/{mlp,gpt}, and build/trainers/arena
# when nvcc exists) and their kernels (build/kernels/*.so for the simulated
# device; build/kernels/sm_90/*.cubin when nvcc exists).  Matmuls go
# through cuBLAS.

TR_DIR      := $(BUILD)/trainers
KERNEL_DIR  := $(BUILD)/kernels
TR_KERNELS  := $(patsubst tests/trainers/kernels/%.cu,%,$(wildcard tests/trainers/kernels/*.cu))
TR_MODULES  := $(TR_KERNELS:%=$(KERNEL_DIR)/%.so)
TR_CUBINS   := $(TR_KERNELS:%=$(KERNEL_DIR)/sm_90/%.cubin)
TR_COMMON   := trainer_cli trainer_check trainer_kernels trainer_blas trainer_data trainer_loop \
	       trainer_alloc trainer_pool trainer_vmm trainer_dist
TR_OBJS     := $(TR_COMMON:%=$(TR_DIR)/obj/%.o)
# Linked like a real CUDA program: the real libcublas and libcudart and the
# driver stub (NEEDED libcuda.so.1); sim/bin/simrun swaps in the simulated
# libraries.  The real libcublas needs libcublasLt at link time.
# NCCL (--ranks): the toolkit's libnccl.so, in lib64/ or lib/.
NCCL_LINK   := $(addprefix -L,$(dir $(wildcard $(CUDA_HOME)/lib/libnccl.so \
	       $(CUDA_HOME)/lib64/libnccl.so))) -lnccl
TR_LIBS     := -L$(CUDA_HOME)/lib64 -Wl,-rpath-link,$(CUDA_HOME)/lib64 -lcublas -lcudart \
	       $(NCCL_LINK) -L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread -lm
TR_CFLAGS   := $(CFLAGS) -Itests/trainers -DTRAINER_KERNELS_DIR='"$(abspath $(KERNEL_DIR))"'

$(KERNEL_DIR)/%.so: tests/trainers/kernels/%.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@
$(KERNEL_DIR)/sm_90/%.cubin: tests/trainers/kernels/%.cu
	@mkdir -p $(@D)
	$(NVCC) -cubin -arch=sm_90 $< -o $@

$(TR_DIR)/obj/%.o: tests/trainers/%.c
	@mkdir -p $(@D)
	$(CC) $(TR_CFLAGS) -c $< -o $@

$(TR_DIR)/mlp $(TR_DIR)/gpt: $(TR_DIR)/%: $(TR_DIR)/obj/%.o $(TR_OBJS) | $(SIMCUDA_DIR)/libcublas.so.13 \
		$(SIMCUDA_DIR)/libnccl.so.2
	$(CC) $(TR_DIR)/obj/$*.o $(TR_OBJS) -o $@ $(TR_LIBS)

# arena: host code compiled by nvcc, device code by simcc (sim/bin/simnvcc),
# warnings as errors on both sides.
ARENA_DIR  := tests/trainers/arena
ARENA_OBJS := $(patsubst $(ARENA_DIR)/%.cu,$(TR_DIR)/arena-obj/%.o,$(wildcard $(ARENA_DIR)/*.cu))
ARENA_NVCC := SIMCUDA_DIR=$(abspath $(SIMCUDA_DIR)) SIMNVCC_NVCC=$(NVCC) CUDA_HOME=$(CUDA_HOME) \
	      sim/bin/simnvcc -std=c++17 -O2 -Xcompiler -Wall,-Wextra -Werror all-warnings \
	      -Xsimcc -Werror

$(TR_DIR)/arena-obj/%.o: $(ARENA_DIR)/%.cu $(ARENA_DIR)/arena.h sim/bin/simnvcc $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(ARENA_NVCC) -c $< -o $@
$(TR_DIR)/arena: $(ARENA_OBJS) | $(SIMCUDA_DIR)/libcublas.so.13
	$(ARENA_NVCC) $(ARENA_OBJS) -o $@ -lcublas

TRAINERS := $(TR_DIR)/mlp $(TR_DIR)/gpt $(TR_MODULES)
ifeq ($(HAVE_NVCC),1)
TRAINERS += $(TR_CUBINS) $(TR_DIR)/arena
else
TRAINERS += trainers-no-nvcc
.PHONY: trainers-no-nvcc
trainers-no-nvcc:
	@echo "note: no nvcc at $(NVCC): $(TR_DIR)/arena, the kernels' sm_90 cubins and" \
		"the tests that need nvcc are not built (make test reports them as not run)"
endif
.PHONY: trainers
trainers: $(TRAINERS)
ALL_TARGETS += $(TRAINERS)

E2E_TESTS += tests/e2e/trainer_binaries.sh tests/e2e/trainer_determinism.sh \
	     tests/e2e/trainer_learns.sh tests/e2e/trainer_bwd_thread.sh tests/e2e/trainer_oom.sh \
	     tests/e2e/trainer_pinned.sh tests/e2e/trainer_alloc.sh tests/e2e/trainer_alloc_remat.sh \
	     tests/e2e/trainer_splitk.sh
E2E_NVCC_TESTS += tests/e2e/trainer_nvcc.sh tests/e2e/trainer_arena.sh tests/e2e/trainer_arena_remat.sh

# Finite-difference checks of the backward kernels.
$(TR_DIR)/test_kernels: tests/trainers/test_kernels.c $(KERNEL_DIR)/elementwise.so $(KERNEL_DIR)/reduce.so \
		$(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) -Isim/include -DKERNELS_DIR='"$(KERNEL_DIR)"' $< -o $@ \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) \
		-lcmocka -ldl -lm
UNIT_TESTS += $(TR_DIR)/test_kernels

# The caching allocator and its expandable segments, on the simulated
# runtime and driver (linked directly, as sim's runtime tests); the
# trainers' sources it tests are built again with $(SAN).
TR_ALLOC_OBJS := $(patsubst %,$(TR_DIR)/san-obj/%.o,test_alloc trainer_pool trainer_alloc \
		 trainer_vmm trainer_check trainer_data)
TR_ALLOC_LIBS := $(SIMCUDA_DIR)/libcudart.so.13 $(SIMCUDA_DIR)/libcuda.so.1 \
		 $(SIMCUDA_DIR)/libcublas.so.13
$(TR_DIR)/san-obj/%.o: tests/trainers/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) -Itests/trainers -c $< -o $@
$(TR_DIR)/test_alloc: $(TR_ALLOC_OBJS) $(TR_ALLOC_LIBS)
	$(CC) $(SAN) -o $@ $(TR_ALLOC_OBJS) -Wl,--no-as-needed \
		$(TR_ALLOC_LIBS) -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) -lcmocka -ldl -lpthread
UNIT_TESTS += $(TR_DIR)/test_alloc
