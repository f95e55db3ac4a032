// Expected Improvement for minimisation, in log space (Ament et al., "Unexpected Improvements to
// Expected Improvement", 2023): log EI keeps a usable value and gradient far from the incumbent,
// where EI itself underflows to 0 and a candidate search sees a flat landscape.
#ifndef AMT_ORCHESTRATOR_SEARCH_GP_ACQUISITION_H_
#define AMT_ORCHESTRATOR_SEARCH_GP_ACQUISITION_H_

namespace amt::search {

// log h(z) with h(z) = phi(z) + z Phi(z) (phi, Phi: standard normal density and distribution),
// accurate for every finite z (an asymptotic series below z = -25).
double LogH(double z);

// d/dz log h(z) = Phi(z) / h(z).
double DLogH(double z);

// log EI(x) = log(sigma h((best - mean) / sigma)) at a point with posterior `mean` and
// latent `variance` (> 0), for minimisation with incumbent value `best`. When the gradients of
// the mean and variance are known, the gradient of log EI is
//   d_mean * dmean + d_variance * dvariance, with the two factors written here.
double LogExpectedImprovement(double mean, double variance, double best, double* d_mean = nullptr,
                              double* d_variance = nullptr);

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_GP_ACQUISITION_H_
