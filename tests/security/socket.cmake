# Attacks on gpreemptd's socket and request path (docs/gpreemptd.md, "The socket's limits"): each
# against a real daemon on a simulated machine, with the rig of tests/gpreemptd.
if(TARGET kfdsim)
  gpreempt_add_gtest(test_security_socket
    SOURCES test_socket_attacks.cpp test_terminal_text.cpp test_metrics_endpoint.cpp ${PROJECT_SOURCE_DIR}/tests/gpreemptd/daemon_rig.cpp
            ${PROJECT_SOURCE_DIR}/tests/core/sim_harness.cpp
    LIBS gpreempt_test_support gpreempt_client_protocol gpreempt_common nlohmann_json::nlohmann_json
    DEPENDS gpreemptd gpreemptd_test_peer gpreempt_cli gpreempt-workload kfdsim kfdsimd kfdshim)
  target_include_directories(test_security_socket PRIVATE ${PROJECT_SOURCE_DIR}/tests/gpreemptd
    ${PROJECT_SOURCE_DIR}/tests/core ${PROJECT_SOURCE_DIR}/tests)
endif()
