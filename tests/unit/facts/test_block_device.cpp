// The disk behind a path, from fixture host trees laid out as the kernel lays out
// /proc/self/mountinfo and /sys/block (tests/fixtures/disks/README.md).
#include <fake_system.hpp>
#include <gpuprov/facts.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;

constexpr std::uint64_t kGiB = 1ull << 30;

TEST(Mountinfo, ParsesMountPointSourceAndType) {
    const auto mounts = parse_mountinfo(
        "28 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
        "40 28 259:5 / /srv/data\\040set rw,relatime shared:31 - xfs /dev/nvme1n1 rw\n"
        "41 28 0:50 / /mnt rw - \n");
    ASSERT_EQ(mounts.size(), 2U);
    EXPECT_EQ(mounts[0].mount_point, "/");
    EXPECT_EQ(mounts[0].source, "/dev/nvme0n1p2");
    EXPECT_EQ(mounts[0].fstype, "ext4");
    EXPECT_EQ(mounts[1].mount_point, "/srv/data set");
}

TEST(BlockDevice, TwoTerabyteNvmeIs1863GiB) {
    FakeSystem sys;
    sys.load_tree("disks/nvme-2tb");
    const auto dev = block_device_for(sys, "/");
    ASSERT_TRUE(dev.has_value());
    EXPECT_EQ(dev->mount_point, "/");
    EXPECT_EQ(dev->source, "/dev/nvme0n1p2");
    EXPECT_EQ(dev->disks, std::vector<std::string>{"nvme0n1"});
    EXPECT_EQ(dev->size_bytes, 2000398934016ULL);
    EXPECT_EQ(dev->size_bytes / kGiB, 1863U);
    EXPECT_TRUE(dev->nvme);
    EXPECT_EQ(dev->rotational, std::optional<bool>(false));
    // A path below a mount point belongs to it; /boot/efi is its own partition.
    EXPECT_EQ(block_device_for(sys, "/var/lib/docker")->source, "/dev/nvme0n1p2");
    EXPECT_EQ(block_device_for(sys, "/boot/efi")->source, "/dev/nvme0n1p1");
    EXPECT_EQ(block_device_for(sys, "/boot/efix")->source, "/dev/nvme0n1p2");
    // tmpfs has no disk.
    EXPECT_FALSE(block_device_for(sys, "/run").has_value());
}

TEST(BlockDevice, SataSsdAndSpinningDisk) {
    FakeSystem ssd;
    ssd.load_tree("disks/ssd-1tb");
    const auto s = block_device_for(ssd, "/");
    ASSERT_TRUE(s.has_value());
    EXPECT_FALSE(s->nvme);
    EXPECT_EQ(s->rotational, std::optional<bool>(false));
    EXPECT_EQ(s->size_bytes / kGiB, 931U);
    FakeSystem hdd;
    hdd.load_tree("disks/hdd-1tb");
    EXPECT_EQ(block_device_for(hdd, "/")->rotational, std::optional<bool>(true));
}

TEST(BlockDevice, LvmIsFollowedToTheNvmeUnderIt) {
    FakeSystem sys;
    sys.load_tree("disks/lvm-nvme");
    const auto root = block_device_for(sys, "/home");
    ASSERT_TRUE(root.has_value());
    EXPECT_EQ(root->source, "/dev/mapper/vg0-root");
    EXPECT_EQ(root->disks, std::vector<std::string>{"nvme0n1"});
    EXPECT_TRUE(root->nvme);
    EXPECT_EQ(root->size_bytes / kGiB, 1863U);
    const auto data = block_device_for(sys, "/srv/data set/imagenet");
    ASSERT_TRUE(data.has_value());
    EXPECT_EQ(data->disks, std::vector<std::string>{"nvme1n1"});
}

TEST(BlockDevice, NoMountinfoOrUnknownDeviceIsUnknown) {
    FakeSystem none;
    EXPECT_FALSE(block_device_for(none, "/").has_value());
    FakeSystem sys;
    sys.add_file("/proc/self/mountinfo", "28 1 8:2 / / rw - ext4 /dev/vda1 rw\n");
    EXPECT_FALSE(block_device_for(sys, "/").has_value());
}

} // namespace
} // namespace gpuprov
