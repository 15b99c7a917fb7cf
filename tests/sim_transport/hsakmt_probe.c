/* hsakmt_probe: Debian's libhsakmt (a KFD client nobody here wrote) against the simulated machine.
 * Prints one "key value..." line per fact so the test can compare them with the topology files. */
#include <hsakmt.h>
#include <stdio.h>

int main(void) {
  HSAKMT_STATUS s = hsaKmtOpenKFD();
  printf("open %d\n", (int)s);
  if (s != HSAKMT_STATUS_SUCCESS) return 1;
  HsaVersionInfo v;
  s = hsaKmtGetVersion(&v);
  printf("version %d %u %u\n", (int)s, v.KernelInterfaceMajorVersion, v.KernelInterfaceMinorVersion);
  HsaSystemProperties sp;
  s = hsaKmtAcquireSystemProperties(&sp);
  printf("system %d %u\n", (int)s, s == HSAKMT_STATUS_SUCCESS ? sp.NumNodes : 0);
  for (HSAuint32 i = 0; s == HSAKMT_STATUS_SUCCESS && i < sp.NumNodes; ++i) {
    HsaNodeProperties np;
    HSAKMT_STATUS r = hsaKmtGetNodeProperties(i, &np);
    char name[64] = {0};
    for (int c = 0; c < 63 && np.MarketingName[c]; ++c) name[c] = (char)np.MarketingName[c];
    printf("node %u %d simd_count %u gfx %u.%u.%u drm_render_minor %u device_id %u location_id %u "
           "cpu_cores_count %u name %s\n",
           i, (int)r, np.NumFComputeCores, np.EngineId.ui32.Major, np.EngineId.ui32.Minor,
           np.EngineId.ui32.Stepping, np.DrmRenderMinor, np.DeviceId, np.LocationId, np.NumCPUCores,
           name[0] ? name : "-");
  }
  printf("close %d\n", (int)hsaKmtCloseKFD());
  return 0;
}
