#include "orchestrator/search/gp_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace amt::search {
namespace {

struct Data {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

// y = sin(5 x0) + x1^2 (x2 irrelevant) at n seeded random points of the unit cube.
Data Sample(int n, double noise = 0) {
  std::mt19937_64 engine(5);
  std::uniform_real_distribution<double> u(0, 1);
  Data d{Eigen::MatrixXd(n, 3), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j) d.x(i, j) = u(engine);
    d.y[i] = std::sin(5 * d.x(i, 0)) + d.x(i, 1) * d.x(i, 1) + noise * (u(engine) - 0.5);
  }
  d.y.array() -= d.y.mean();
  return d;
}

GpHyperparameters Hyper(double l0, double l1, double l2, double signal, double noise) {
  return GpHyperparameters{Eigen::Vector3d(std::log(l0), std::log(l1), std::log(l2)),
                           std::log(signal), std::log(noise)};
}

const std::vector<int> kGroups = {0, 1, 2};

TEST(Matern52, IsTheSignalVarianceAtZeroAndDecays) {
  EXPECT_DOUBLE_EQ(Matern52(0, 2.0), 2.0);
  EXPECT_NEAR(Matern52(1.0, 1.0), (1 + std::sqrt(5.0) + 5.0 / 3.0) * std::exp(-std::sqrt(5.0)),
              1e-15);
  EXPECT_LT(Matern52(4.0, 1.0), Matern52(1.0, 1.0));
}

TEST(GpHyperparameters, PackAndUnpackRoundTrip) {
  const GpHyperparameters h = Hyper(0.1, 0.2, 0.3, 1.5, 1e-4);
  const GpHyperparameters back = GpHyperparameters::Unpack(h.Pack());
  EXPECT_EQ(back.log_lengthscales, h.log_lengthscales);
  EXPECT_EQ(back.log_signal_variance, h.log_signal_variance);
  EXPECT_EQ(back.log_noise_variance, h.log_noise_variance);
}

TEST(MarginalLikelihood, GradientMatchesFiniteDifferences) {
  const Data d = Sample(25, 0.1);
  const MarginalLikelihood ml(d.x, d.y, kGroups);
  Eigen::VectorXd theta(5);
  theta << -1.0, -0.5, 0.3, 0.2, -3.0;
  Eigen::VectorXd g;
  ml(theta, &g);
  for (int k = 0; k < 5; ++k) {
    Eigen::VectorXd a = theta;
    Eigen::VectorXd b = theta;
    a[k] += 1e-5;
    b[k] -= 1e-5;
    EXPECT_NEAR(g[k], (ml(a, nullptr) - ml(b, nullptr)) / 2e-5,
                1e-4 * std::max(1.0, std::fabs(g[k])))
        << k;
  }
}

TEST(MarginalLikelihood, SharesOneLengthScaleWithinAGroup) {
  // Two features in one group (a categorical's one-hot columns): 3 packed hyperparameters.
  const Data d = Sample(10);
  const MarginalLikelihood ml(d.x.leftCols(2), d.y, {0, 0});
  EXPECT_EQ(ml.groups(), 1);
  Eigen::VectorXd g;
  EXPECT_TRUE(std::isfinite(ml(Eigen::Vector3d(-1, 0, -4), &g)));
  EXPECT_EQ(g.size(), 3);
}

TEST(FitHyperparameters, FindsTheIrrelevantDimension) {
  const Data d = Sample(40);
  std::mt19937_64 engine(1);
  const GpHyperparameters h = FitHyperparameters(d.x, d.y, kGroups, engine);
  // x0 varies fastest, x2 not at all.
  EXPECT_LT(h.log_lengthscales[0], h.log_lengthscales[1]);
  EXPECT_GT(h.log_lengthscales[2], h.log_lengthscales[1] + 1.0);
  EXPECT_LT(h.log_noise_variance, std::log(1e-2));
}

TEST(FitHyperparameters, IsDeterministicForAGivenEngineState) {
  const Data d = Sample(20);
  std::mt19937_64 a(9);
  std::mt19937_64 b(9);
  EXPECT_EQ(FitHyperparameters(d.x, d.y, kGroups, a).Pack(),
            FitHyperparameters(d.x, d.y, kGroups, b).Pack());
}

TEST(GaussianProcess, InterpolatesNoiselessData) {
  const Data d = Sample(20);
  const GaussianProcess gp(d.x, d.y, kGroups, Hyper(0.3, 0.5, 2, 1, 1e-6));
  Eigen::MatrixXd mean;
  Eigen::VectorXd variance;
  gp.Predict(d.x, &mean, &variance);
  EXPECT_LT((mean.col(0) - d.y).cwiseAbs().maxCoeff(), 1e-3);
  EXPECT_LT(variance.maxCoeff(), 1e-4);
}

TEST(GaussianProcess, VarianceGrowsAwayFromTheData) {
  Eigen::MatrixXd x(1, 3);
  x << 0.5, 0.5, 0.5;
  const GaussianProcess gp(x, Eigen::VectorXd::Constant(1, 1.0), kGroups,
                           Hyper(0.2, 0.2, 0.2, 1, 1e-6));
  Eigen::MatrixXd points(3, 3);
  points << 0.5, 0.5, 0.5, 0.6, 0.5, 0.5, 1.0, 1.0, 1.0;
  Eigen::MatrixXd mean;
  Eigen::VectorXd variance;
  gp.Predict(points, &mean, &variance);
  EXPECT_LT(variance[0], variance[1]);
  EXPECT_LT(variance[1], variance[2]);
  EXPECT_NEAR(variance[2], 1.0, 1e-2);  // the prior far away
  EXPECT_NEAR(mean(2, 0), 0.0, 1e-2);   // zero prior mean
}

TEST(GaussianProcess, ToleratesDuplicatePoints) {
  Eigen::MatrixXd x(3, 3);
  x << 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3;
  const GaussianProcess gp(x, Eigen::Vector3d(1, 1.1, 0.9), kGroups, Hyper(0.2, 0.2, 0.2, 1, 1e-6));
  Eigen::MatrixXd mean;
  Eigen::VectorXd variance;
  gp.Predict(x.topRows(1), &mean, &variance);
  EXPECT_NEAR(mean(0, 0), 1.0, 1e-3);
}

// Without noise, duplicate points make the kernel matrix singular: the factorisation fails on
// the kernel itself and succeeds only after jitter is added to a freshly built one (it is
// factorised in place, so a failed attempt has overwritten the first).
TEST(GaussianProcess, RetriesWithJitterWhenTheKernelIsSingular) {
  Eigen::MatrixXd x(4, 3);
  x << 0.7, 0.7, 0.7, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3;
  GaussianProcess gp(x, Eigen::Vector4d(-1, 1, 1.1, 0.9), kGroups, Hyper(0.2, 0.2, 0.2, 2, 0));
  Eigen::MatrixXd points(2, 3);
  points << 0.1, 0.2, 0.3, 0.7, 0.7, 0.7;
  Eigen::MatrixXd mean;
  Eigen::VectorXd variance;
  gp.Predict(points, &mean, &variance);
  EXPECT_NEAR(mean(0, 0), 1.0, 1e-3);  // the duplicates' mean
  EXPECT_NEAR(mean(1, 0), -1.0, 1e-3);
  EXPECT_LT(variance.maxCoeff(), 1e-4);
  Eigen::MatrixXd pending(1, 3);
  pending << 0.1, 0.2, 0.3;  // a fourth copy, conditioned on as a running trial
  gp.Condition(pending, Eigen::MatrixXd::Constant(1, 1, 1.0));
  gp.Predict(points, &mean, &variance);
  EXPECT_TRUE(mean.allFinite());
  EXPECT_NEAR(mean(0, 0), 1.0, 1e-3);
}
TEST(GaussianProcess, ConditioningMatchesARefit) {
  const Data d = Sample(15);
  const GpHyperparameters h = Hyper(0.3, 0.4, 1, 1.2, 1e-4);
  GaussianProcess incremental(d.x.topRows(10), d.y.head(10), kGroups, h);
  incremental.Condition(d.x.bottomRows(5), d.y.tail(5));
  const GaussianProcess full(d.x, d.y, kGroups, h);
  const Data probe = Sample(7);
  Eigen::MatrixXd m1;
  Eigen::MatrixXd m2;
  Eigen::VectorXd v1;
  Eigen::VectorXd v2;
  incremental.Predict(probe.x * 0.9, &m1, &v1);
  full.Predict(probe.x * 0.9, &m2, &v2);
  EXPECT_LT((m1 - m2).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((v1 - v2).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_EQ(incremental.size(), 15);
}

TEST(GaussianProcess, FantasyColumnsShareVarianceAndDifferInMean) {
  const Data d = Sample(10);
  GaussianProcess gp(d.x, d.y, kGroups, Hyper(0.3, 0.4, 1, 1, 1e-6));
  Eigen::MatrixXd pending(1, 3);
  pending << 0.5, 0.5, 0.5;
  gp.Condition(pending, Eigen::RowVector2d(-1.0, 1.0));
  EXPECT_EQ(gp.columns(), 2);
  Eigen::MatrixXd mean;
  Eigen::VectorXd variance;
  gp.Predict(pending, &mean, &variance);
  EXPECT_NEAR(mean(0, 0), -1.0, 1e-3);
  EXPECT_NEAR(mean(0, 1), 1.0, 1e-3);
  EXPECT_LT(variance[0], 1e-4);
}

TEST(GaussianProcess, JointPosteriorDiagonalIsThePredictiveVariance) {
  const Data d = Sample(12);
  const GaussianProcess gp(d.x, d.y, kGroups, Hyper(0.3, 0.4, 1, 1, 1e-4));
  const Data probe = Sample(4);
  Eigen::VectorXd joint_mean;
  Eigen::MatrixXd covariance;
  gp.JointPosterior(probe.x * 0.7, &joint_mean, &covariance);
  Eigen::MatrixXd mean;
  Eigen::VectorXd variance;
  gp.Predict(probe.x * 0.7, &mean, &variance);
  EXPECT_LT((joint_mean - mean.col(0)).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((covariance.diagonal() - variance).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((covariance - covariance.transpose()).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(GaussianProcess, PredictionGradientsMatchFiniteDifferences) {
  const Data d = Sample(15);
  const GaussianProcess gp(d.x, d.y, kGroups, Hyper(0.3, 0.4, 1, 1.3, 1e-4));
  const Eigen::Vector3d p(0.31, 0.72, 0.45);
  Eigen::VectorXd mean;
  double variance = 0;
  Eigen::MatrixXd d_mean;
  Eigen::VectorXd d_variance;
  gp.PredictWithGradient(p, &mean, &variance, &d_mean, &d_variance);
  Eigen::MatrixXd batch_mean;
  Eigen::VectorXd batch_variance;
  gp.Predict(p.transpose(), &batch_mean, &batch_variance);
  EXPECT_NEAR(mean[0], batch_mean(0, 0), 1e-10);
  EXPECT_NEAR(variance, batch_variance[0], 1e-10);
  for (int j = 0; j < 3; ++j) {
    Eigen::Vector3d a = p;
    Eigen::Vector3d b = p;
    a[j] += 1e-6;
    b[j] -= 1e-6;
    Eigen::VectorXd ma;
    Eigen::VectorXd mb;
    double va = 0;
    double vb = 0;
    Eigen::MatrixXd unused_m;
    Eigen::VectorXd unused_v;
    gp.PredictWithGradient(a, &ma, &va, &unused_m, &unused_v);
    gp.PredictWithGradient(b, &mb, &vb, &unused_m, &unused_v);
    EXPECT_NEAR(d_mean(j, 0), (ma[0] - mb[0]) / 2e-6, 1e-5) << j;
    EXPECT_NEAR(d_variance[j], (va - vb) / 2e-6, 1e-5) << j;
  }
}

// The batch mean gradients (used for the local penalty's Lipschitz constant) are those of
// PredictWithGradient, row by row.
TEST(GaussianProcess, MeanGradientsMatchPredictWithGradient) {
  const Data d = Sample(15);
  const GaussianProcess gp(d.x, d.y, kGroups, Hyper(0.3, 0.4, 1, 1.3, 1e-4));
  const Data probe = Sample(5);
  const Eigen::MatrixXd points = probe.x * 0.8;
  const Eigen::MatrixXd gradients = gp.MeanGradients(points);
  ASSERT_EQ(gradients.rows(), points.rows());
  ASSERT_EQ(gradients.cols(), points.cols());
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    Eigen::VectorXd mean;
    double variance = 0;
    Eigen::MatrixXd d_mean;
    Eigen::VectorXd d_variance;
    gp.PredictWithGradient(points.row(i).transpose(), &mean, &variance, &d_mean, &d_variance);
    EXPECT_LT((gradients.row(i).transpose() - d_mean.col(0)).cwiseAbs().maxCoeff(), 1e-10) << i;
  }
}

}  // namespace
}  // namespace amt::search
