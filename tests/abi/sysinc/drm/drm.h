/* Debian ships <linux/kfd_ioctl.h> in linux-libc-dev but <drm/drm.h> only inside libdrm-dev's
 * private directory. The KFD header needs nothing from it but the __u32/__u64 types. */
#pragma once
#include <linux/types.h>
