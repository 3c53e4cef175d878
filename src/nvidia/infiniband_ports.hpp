#pragma once
// What a non-ACTIVE InfiniBand port's state means, shared by verify's infiniband.ports and
// doctor's ib-port-not-active so both give the same cause for the same port.
#include <gpuprov/facts.hpp>
#include <string>

namespace gpuprov::nvidia_detail {

/// "mlx5_0:1 DOWN (Polling)": the port, its logical and its physical state.
[[nodiscard]] std::string ib_port_state_text(const IbDevice& dev, const IbPort& p);
/// The likely cause and fix of a port that is not ACTIVE, from its physical and logical state
/// (Polling = no link, Disabled, INIT/ARMED = no subnet manager).
[[nodiscard]] std::string ib_port_advice(const IbPort& p);

} // namespace gpuprov::nvidia_detail
