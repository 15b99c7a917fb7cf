/* Stand-in for <drm/drm.h> so Debian's <linux/kfd_ioctl.h> (KFD 1.11) can be included without
 * the kernel's drm uapi headers installed: that header only needs the __u32/__u64 types. */
#pragma once
#include <linux/types.h>
