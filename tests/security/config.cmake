# Trust boundaries in what gpreemptd reads (docs/security.md): who may put a process in a class
# that preempts others (the shipped and built-in configs, the config file's owner and mode, the
# guard's floor), which cgroups name a container, the /proc and runtime files read, and which
# processes ptrace may take.
gpreempt_add_gtest(test_security_classes
  SOURCES test_self_declared_class.cpp test_config_file_trust.cpp test_spoofed_container.cpp
  LIBS gpreemptd_config gpreempt_discovery gpreempt_test_support)
gpreempt_add_gtest(test_security_ptrace
  SOURCES test_ptrace_refusals.cpp
  LIBS gpreempt_ptrace gpreempt_common)
gpreempt_add_gtest(test_security_doctor
  SOURCES test_doctor_trust.cpp
  LIBS gpreempt_doctor gpreemptd_config)
gpreempt_add_gtest(test_security_files
  SOURCES test_untrusted_files.cpp
  LIBS gpreemptd_lib)
if(TARGET kfdsim)
  gpreempt_add_gtest(test_security_sim_classes
    SOURCES test_self_named_server.cpp test_doctor_running.cpp ${PROJECT_SOURCE_DIR}/tests/gpreemptd/daemon_rig.cpp
            ${PROJECT_SOURCE_DIR}/tests/core/sim_harness.cpp
    LIBS gpreempt_test_support gpreempt_client_protocol gpreempt_common nlohmann_json::nlohmann_json
    DEPENDS gpreemptd gpreemptd_test_peer gpreempt_cli gpreempt-workload kfdsim kfdsimd kfdshim)
  target_include_directories(test_security_sim_classes PRIVATE ${PROJECT_SOURCE_DIR}/tests/gpreemptd
    ${PROJECT_SOURCE_DIR}/tests/core ${PROJECT_SOURCE_DIR}/tests)
endif()
