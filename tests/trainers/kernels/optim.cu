// optim.cu — optimizer updates, one thread per parameter element.  The
// trainers launch these through cuLaunchKernelEx.  The step number comes by
// value, so bias correction differs from launch to launch.

// Adam (weight_decay added to the gradient) or AdamW (decoupled, adamw=1).
extern "C" __global__ void adam_step(float *param, const float *grad, float *m, float *v, int n,
                                     float lr, float beta1, float beta2, float eps,
                                     float weight_decay, int adamw, int step)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float g = grad[i];
	float p = param[i];
	if (adamw)
		p -= lr * weight_decay * p;
	else
		g += weight_decay * p;
	float mi = beta1 * m[i] + (1.0f - beta1) * g;
	float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
	m[i] = mi;
	v[i] = vi;
	float mhat = mi / (1.0f - powf(beta1, (float)step));
	float vhat = vi / (1.0f - powf(beta2, (float)step));
	param[i] = p - lr * mhat / (sqrtf(vhat) + eps);
}

#ifdef __SIMCUDA__
// Memory-bound, four tensors per element.
SIMCUDA_DEFAULT_COST
{
	return 2000.0 + 0.05 * grid.x * grid.y * grid.z * block.x * block.y * block.z;
}
#endif
