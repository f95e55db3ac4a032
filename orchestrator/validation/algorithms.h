// What amt-local knows of SageMaker's images: the framework of an image URI (the images the
// SDK's framework estimators name, run in script mode), and the built-in algorithms it runs,
// whose metric definitions SageMaker supplies itself. Pure.
#ifndef AMT_ORCHESTRATOR_VALIDATION_ALGORITHMS_H_
#define AMT_ORCHESTRATOR_VALIDATION_ALGORITHMS_H_

#include <string>
#include <vector>

#include "amt/v1/tuning.pb.h"
#include "google/protobuf/map.h"

namespace amt::validation {

// The framework of a SageMaker framework image URI, as the SDK's image_uris.retrieve builds
// them (<account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository>:<tag>): "sklearn"
// (sagemaker-scikit-learn), "xgboost" (sagemaker-xgboost, xgboost), "pytorch" (pytorch-training,
// sagemaker-pytorch), "tensorflow" (tensorflow-training, sagemaker-tensorflow-scriptmode,
// sagemaker-tensorflow), "huggingface" (huggingface-pytorch-training,
// huggingface-tensorflow-training), "mxnet" (mxnet-training, sagemaker-mxnet); "" for any other.
std::string FrameworkOfImage(const std::string& image);

// Whether a job of `image` with these hyperparameters is the built-in XGBoost algorithm: the
// XGBoost image without a script-mode entry point (sagemaker_program).
bool IsBuiltInXgboost(const std::string& image,
                      const google::protobuf::Map<std::string, std::string>& hyperparameters);

// The metric definitions SageMaker supplies for the built-in XGBoost algorithm (XGBoost 1.3-1's
// list, spec/sagemaker-amt.md): train:<m> and validation:<m>, each matching the per-round line
// "[N]#011train-<m>:V#011validation-<m>:V".
std::vector<v1::MetricDefinition> BuiltInXgboostMetricDefinitions();

// As SageMaker completes a request for a built-in algorithm: when its algorithm specification
// has no MetricDefinitions, the algorithm's are written into it (a tuning job's also gets
// "ObjectiveMetric", repeating the objective's regex, when the objective is one of them).
void AddBuiltInMetricDefinitions(v1::CreateHyperParameterTuningJobRequest& request);
void AddBuiltInMetricDefinitions(v1::CreateTrainingJobRequest& request);

}  // namespace amt::validation

#endif  // AMT_ORCHESTRATOR_VALIDATION_ALGORITHMS_H_
