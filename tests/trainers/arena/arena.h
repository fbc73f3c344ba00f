// arena.h — what the files of the arena trainer share.
//
// arena trains a small GPT-style transformer the way llm.c and darknet are
// written: host code compiled by nvcc with <<<>>> launches, matmuls through
// cuBLAS, and memory taken once at start-up: the parameters, their
// gradients, the AdamW state, the activations and the activation
// gradients are each ONE cudaMalloc, every tensor an offset into its
// arena.  kernels.cu holds the kernels and their launchers, model.cu the
// forward and backward passes, arena.cu the command line, the arenas, the
// data and the training loop.  See tests/trainers/README.md.
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

extern const char *const arena_prog; // "arena", the prefix of every message

// Ends the run with one message and exit status 2 when a call failed.
void cuda_check(cudaError_t e, const char *call, const char *file, int line);
void cublas_check(cublasStatus_t s, const char *call, const char *file, int line);
#define CUDA_CHECK(call)   cuda_check((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) cublas_check((call), #call, __FILE__, __LINE__)

struct config {
	int B, T, C, NH, L, V; // batch, sequence, width, heads, layers, vocabulary
	int iters;
	float lr;
	unsigned long long seed;
};

// Parameter tensors, in arena order; per-layer ones hold all L layers.
enum {
	P_WTE,     // V x C token embedding
	P_WPE,     // T x C position embedding
	P_LN1W,    // L x C
	P_LN1B,    // L x C
	P_QKVW,    // L x 3C x C
	P_QKVB,    // L x 3C
	P_PROJW,   // L x C x C
	P_PROJB,   // L x C
	P_LN2W,    // L x C
	P_LN2B,    // L x C
	P_FCW,     // L x 4C x C
	P_FCB,     // L x 4C
	P_FCPROJW, // L x C x 4C
	P_FCPROJB, // L x C
	P_LNFW,    // C
	P_LNFB,    // C
	P_HEAD,    // V x C: the (wide) classifier
	NUM_PARAMS
};

// Activations saved by the forward pass (per-layer ones hold all layers).
enum {
	A_ENCODED,  // B x T x C
	A_LN1,      // L x BT x C
	A_LN1_MEAN, // L x BT
	A_LN1_RSTD, // L x BT
	A_QKV,      // L x BT x 3C
	A_Q,        // L x B x NH x T x HS
	A_K,        // L x B x NH x T x HS
	A_V,        // L x B x NH x T x HS
	A_PREATT,   // L x B x NH x T x T
	A_ATT,      // L x B x NH x T x T
	A_ATTY,     // L x BT x C (heads joined)
	A_ATTPROJ,  // L x BT x C
	A_RES2,     // L x BT x C
	A_LN2,      // L x BT x C
	A_LN2_MEAN, // L x BT
	A_LN2_RSTD, // L x BT
	A_FCH,      // L x BT x 4C
	A_FCH_GELU, // L x BT x 4C
	A_FCPROJ,   // L x BT x C
	A_RES3,     // L x BT x C
	A_LNF,      // BT x C
	A_LNF_MEAN, // BT
	A_LNF_RSTD, // BT
	A_LOGITS,   // BT x V; the backward pass turns it into its gradient
	A_LOSSES,   // BT
	A_LOSS,     // 1: the mean loss
	NUM_ACTS
};

// Gradients of activations: scratch the backward pass reuses layer after
// layer.
enum {
	G_RES,    // BT x C: the gradient flowing down the residual stream
	G_LN,     // BT x C
	G_QKV,    // BT x 3C
	G_Q,      // B x NH x T x HS
	G_K,      // B x NH x T x HS
	G_V,      // B x NH x T x HS
	G_Y,      // B x NH x T x HS
	G_ATT,    // B x NH x T x T
	G_PREATT, // B x NH x T x T
	G_ATTY,   // BT x C
	G_FCH,    // BT x 4C
	G_FCH2,   // BT x 4C
	NUM_GRAD_ACTS
};

// Tensors as offsets into an arena: the sizes (in floats) of each set, and
// place(), which points every tensor of a set into its arena.
void param_sizes(const config &c, size_t *sizes);
void act_sizes(const config &c, size_t *sizes);
void grad_act_sizes(const config &c, size_t *sizes);
size_t layout_total(const size_t *sizes, int count);
void place(float *base, const size_t *sizes, int count, float **ptr);

// The model: pointers into the arenas, and the cuBLAS handle.
struct model {
	config cfg;
	cublasHandle_t blas;
	float *params[NUM_PARAMS], *grads[NUM_PARAMS];
	float *acts[NUM_ACTS], *grad_acts[NUM_GRAD_ACTS];
	float *param_arena, *grad_arena, *adam_arena, *act_arena, *grad_act_arena;
	size_t num_params;
	int *tokens, *targets; // B x T each, on the device
};

// model.cu
void model_forward(model &m);  // ends with acts[A_LOSS] and dlogits
void model_backward(model &m); // adds into the gradient arena

// kernels.cu: launchers (every one on the legacy default stream).
void encoder_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B,
                     int T, int C);
void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B, int T,
                      int C, int V);
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int N, int C);
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int N, int C);
void add_bias(float *out, const float *bias, int N, int OC);
void bias_backward(float *dbias, const float *dout, int N, int OC);
void residual_forward(float *out, const float *a, const float *b, int n);
void gelu_forward(float *out, const float *inp, int n);
void gelu_backward(float *dinp, const float *inp, const float *dout, int n);
void qkv_split(float *q, float *k, float *v, const float *qkv, int B, int T, int NH, int HS);
void qkv_join(float *dqkv, const float *dq, const float *dk, const float *dv, int B, int T, int NH,
              int HS);
void heads_join(float *out, const float *y, int B, int T, int NH, int HS);
void heads_split(float *dy, const float *dout, int B, int T, int NH, int HS);
void softmax_causal_forward(float *att, const float *preatt, float scale, int rows, int T);
void softmax_causal_backward(float *dpreatt, const float *datt, const float *att, float scale,
                             int rows, int T);
void crossentropy_fused(float *logits, float *losses, const int *targets, int N, int V);
void mean_loss(float *loss, const float *losses, int N);
void adamw(float *params, const float *grads, float *m, float *v, size_t n, float lr, float beta1,
           float beta2, float eps, float weight_decay, int step);

#endif
