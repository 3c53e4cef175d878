#pragma once
#include <gpuprov/step.hpp>
#include <memory>

namespace gpuprov::steps {

std::unique_ptr<Step> make_preflight();
std::unique_ptr<Step> make_nouveau();
std::unique_ptr<Step> make_cuda_repo();
std::unique_ptr<Step> make_mok();
std::unique_ptr<Step> make_driver();
std::unique_ptr<Step> make_fabric_manager();
std::unique_ptr<Step> make_cuda_toolkit();
std::unique_ptr<Step> make_cudnn();
std::unique_ptr<Step> make_nccl();
std::unique_ptr<Step> make_tensorrt();
std::unique_ptr<Step> make_infiniband();
std::unique_ptr<Step> make_container_toolkit();
std::unique_ptr<Step> make_tuning();
std::unique_ptr<Step> make_mig();
std::unique_ptr<Step> make_monitoring();
std::unique_ptr<Step> make_dcgm();
std::unique_ptr<Step> make_readiness();
std::unique_ptr<Step> make_verify();

} // namespace gpuprov::steps
