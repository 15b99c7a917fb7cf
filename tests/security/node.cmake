# The simulated node shared by several users (kfdsim start --shared): the device's own cross-uid
# rules, so that every other attack here can run its victim and its attacker as different uids.
if(TARGET kfdsim)
  gpreempt_add_gtest(test_security_node
    SOURCES test_shared_node.cpp ${PROJECT_SOURCE_DIR}/tests/core/sim_harness.cpp
    LIBS gpreempt_test_support gpreempt_sim_protocol gpreempt_common nlohmann_json::nlohmann_json
    DEPENDS gpreempt_test_target kfdsim kfdsimd kfdshim)
  target_include_directories(test_security_node PRIVATE ${PROJECT_SOURCE_DIR}/tests/core
    ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR})
endif()
