/* An empty kernel: what a launch costs without any work in it. */
extern "C" __global__ void empty(int x)
{
	(void)x;
}
