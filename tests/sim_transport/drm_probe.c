/* drm_probe MINOR: libdrm_amdgpu on the simulated GPU's render node, the way libhsakmt uses it. */
#include <amdgpu.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xf86drm.h>

int main(int argc, char** argv) {
  int minor = argc > 1 ? atoi(argv[1]) : 128;
  char path[64];
  snprintf(path, sizeof path, "/dev/dri/renderD%d", minor);
  struct stat st;
  if (stat(path, &st) != 0) {
    printf("stat failed\n");
    return 1;
  }
  printf("stat chr %d %u:%u\n", S_ISCHR(st.st_mode), major(st.st_rdev), minor(st.st_rdev));
  int fd = drmOpenRender(minor);
  if (fd < 0) {
    printf("open failed\n");
    return 1;
  }
  printf("node_type %d\n", drmGetNodeTypeFromFd(fd));
  drmVersionPtr v = drmGetVersion(fd);
  printf("version %s %d\n", v ? v->name : "-", v ? v->version_major : -1);
  drmFreeVersion(v);
  uint32_t major_version = 0, minor_version = 0;
  amdgpu_device_handle dev;
  int r = amdgpu_device_initialize(fd, &major_version, &minor_version, &dev);
  printf("initialize %d %u\n", r, major_version);
  if (r == 0) {
    struct amdgpu_gpu_info info;
    r = amdgpu_query_gpu_info(dev, &info);
    printf("gpu_info %d device_id %u family %u cu_active %u\n", r, info.asic_id, info.family_id,
           info.cu_active_number);
    printf("name %s\n", amdgpu_get_marketing_name(dev));
    amdgpu_device_deinitialize(dev);
  }
  drmClose(fd);
  return 0;
}
